import { format1, format2 } from './format.js';
import { changeOf, pointsChange, type Change } from './totals.js';

/** How a change against the previous period reads, on the cards and in the per-workflow table. */
export interface ChangeText {
  text: string;
  /** up / down (good / bad colour), same, or none (nothing to compare). */
  cls: 'up' | 'down' | 'same' | 'none';
}

/** Fewer is better for bounces and unsubscribes: their arrows keep their direction, their colours swap. */
export function changeText(c: Change | undefined, fewerIsBetter = false): ChangeText {
  const good = (up: boolean) => (up !== fewerIsBetter ? 'up' : 'down');
  if (!c) return { text: 'no comparison', cls: 'none' };
  switch (c.kind) {
    case 'same':
      return { text: 'no change', cls: 'same' };
    case 'new':
      return { text: 'new (none before)', cls: good(true) };
    case 'undefined':
      return { text: '—', cls: 'none' };
    case 'percent':
      return {
        text: `${c.value > 0 ? '▲ +' : '▼ −'}${format1(Math.abs(c.value))} %`,
        cls: good(c.value > 0),
      };
    case 'points':
      return {
        text: `${c.value > 0 ? '▲ +' : '▼ −'}${format2(Math.abs(c.value))} pp`,
        cls: good(c.value > 0),
      };
  }
}

/**
 * Change of a ratio (a rate over sends, an AOV over purchases): undefined when this period has none of
 * the denominator (the ratio is undefined), "new" when only the previous period had none — never
 * "+50 pp" against a period without sends.
 */
export function ratioChange(
  current: number,
  currentBase: number,
  previous: number,
  previousBase: number,
  kind: 'points' | 'percent',
): Change {
  if (currentBase === 0) return { kind: 'undefined' };
  if (previousBase === 0) return { kind: 'new' };
  return kind === 'points' ? pointsChange(current, previous) : changeOf(current, previous);
}
