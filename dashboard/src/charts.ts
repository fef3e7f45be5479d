import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { dayNumber } from './period.js';
import type { StatsRecord } from './stats.js';
import { format2, formatInt } from './format.js';

/** Daily line charts (uPlot). Only the days the API answered are plotted; values are the API's. */
interface SeriesSpec {
  label: string;
  color: string;
  value: (r: StatsRecord) => number;
}

const charts = new Map<HTMLElement, uPlot>();
const WIDTH_FALLBACK = 600;
const HEIGHT = 220;

/** Dates are calendar dates of the list: shown as written, never shifted into the browser's zone. */
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

function widthOf(el: HTMLElement): number {
  return Math.max(240, Math.floor(el.clientWidth || WIDTH_FALLBACK));
}

export function drawChart(
  el: HTMLElement,
  records: readonly StatsRecord[],
  series: SeriesSpec[],
  kind: 'count' | 'money',
): void {
  charts.get(el)?.destroy();
  el.textContent = '';
  if (records.length === 0) {
    el.textContent = 'No activity in this period.';
    charts.delete(el);
    return;
  }
  const xs = records.map((r) => dayNumber(r.date) * 86_400);
  const data: uPlot.AlignedData = [xs, ...series.map((s) => records.map(s.value))];
  const fmt = kind === 'money' ? format2 : formatInt;
  const plot = new uPlot(
    {
      width: widthOf(el),
      height: HEIGHT,
      tzDate: utc,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      // Whole ticks without decimals; the axis as wide as its longest label.
      axes: [
        // Day and month as read in Romania (24.10), whatever the browser's locale.
        {
          values: (_u, vals) =>
            vals.map((v) => new Date(v * 1000).toISOString().slice(5, 10).split('-').reverse().join('.')),
        },
        {
          values: (_u, vals) => vals.map((v) => (Number.isInteger(v) ? formatInt(v) : fmt(v))),
          size: (_u, values) => 16 + 8 * Math.max(3, ...(values ?? []).map((v) => v.length)),
        },
      ],
      series: [
        { label: 'Date', value: (_u, v) => (v == null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          points: { show: records.length < 40 },
          value: (_u: uPlot, v: number | null) => (v == null ? '' : fmt(v)),
        })),
      ],
    },
    data,
    el,
  );
  charts.set(el, plot);
}

/** Charts follow their container's width (1280 px screens and phones alike). */
const observer =
  typeof ResizeObserver === 'undefined'
    ? undefined
    : new ResizeObserver((entries) => {
        for (const e of entries) {
          const plot = charts.get(e.target as HTMLElement);
          if (plot) plot.setSize({ width: widthOf(e.target as HTMLElement), height: HEIGHT });
        }
      });

export const followWidth = (el: HTMLElement) => observer?.observe(el);
