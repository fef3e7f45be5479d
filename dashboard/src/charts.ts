import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { format2, formatInt } from './format.js';
import { isoDate, tickLabels } from './ticks.js';

/**
 * Daily line charts (uPlot) over the whole period: one x value per calendar day; null values are gaps.
 * The legend reads without hovering (touch screens): each series shows its period figure until the
 * pointer picks a day.
 */
export interface SeriesSpec {
  label: string;
  color: string;
  values: (number | null)[];
  /** What the legend shows when no day is picked: the period's total or ratio. */
  summary: string;
  /** Drawn dotted: the previous period, laid over the current one day by day. */
  dotted?: boolean;
  /** 'right': on an axis of its own at the right (another currency: never flattened on the left one). */
  axis?: 'left' | 'right';
}

/**
 * Line colours, each at least 4.5:1 against the white chart background (WCAG 1.4.11 asks 3:1 for
 * graphics; test/e2e/dashboard-views.test.ts, "focus ring and chart lines reach 3:1 …", checks the 3:1
 * on the legend markers the page draws).
 */
export const PALETTE = {
  blue: '#1a5fd0',
  green: '#137333',
  orange: '#b45309',
  purple: '#8430ce',
  teal: '#0e7490',
  pink: '#9d174d',
  olive: '#4d7c0f',
  slate: '#374151',
} as const;
export const CHART_BACKGROUND = '#ffffff';

const charts = new Map<HTMLElement, uPlot>();
const WIDTH_FALLBACK = 600;
const HEIGHT = 220;

/** Dates are calendar dates of the list: shown as written, never shifted into the browser's zone. */
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
/** Amounts and counts from zero: a line's height is its value, never a difference from an axis' start. */
const fromZero = (_u: uPlot, _min: number | null, max: number | null): uPlot.Range.MinMax => {
  const top = max !== null && max > 0 ? max : 1;
  return uPlot.rangeNum(0, top, 0.1, true);
};

function widthOf(el: HTMLElement): number {
  return Math.max(240, Math.floor(el.clientWidth || WIDTH_FALLBACK));
}

/** A value axis: whole ticks without decimals, as wide as its longest label, named when given. */
function yAxis(scale: string, side: 1 | 3, name: string | undefined): uPlot.Axis {
  return {
    scale,
    side,
    grid: { show: side === 3 },
    ...(name ? { label: name, labelSize: 18 } : {}),
    values: (_u, vals) => vals.map((v) => (Number.isInteger(v) ? formatInt(v) : format2(v))),
    size: (_u, values) => 16 + 8 * Math.max(3, ...(values ?? []).map((v) => v.length)),
  };
}

export function clearChart(el: HTMLElement, text = ''): void {
  charts.get(el)?.destroy();
  charts.delete(el);
  el.textContent = text;
  delete el.dataset.series;
}

export function drawChart(
  el: HTMLElement,
  xs: number[],
  series: SeriesSpec[],
  kind: 'count' | 'money' | 'percent',
  /** Names of the left and right axes (e.g. the currencies), shown beside them. */
  axisNames: [string?, string?] = [],
): void {
  clearChart(el);
  if (xs.length === 0) return;
  const data: uPlot.AlignedData = [xs, ...series.map((s) => s.values)];
  // What is plotted, for people inspecting the page and for the browser tests.
  el.dataset.series = JSON.stringify({
    x: xs.map((x) => new Date(x * 1000).toISOString().slice(0, 10)),
    series: Object.fromEntries(series.map((s) => [s.label, s.values])),
    dotted: series.filter((s) => s.dotted).map((s) => s.label),
    axes: {
      left: {
        name: axisNames[0] ?? '',
        series: series.filter((s) => s.axis !== 'right').map((s) => s.label),
      },
      right: {
        name: axisNames[1] ?? '',
        series: series.filter((s) => s.axis === 'right').map((s) => s.label),
      },
    },
  });
  const fmt = kind === 'count' ? formatInt : format2;
  const unit = kind === 'percent' ? ' %' : '';
  const period = `${isoDate(xs[0]!)} – ${isoDate(xs.at(-1)!)}`;
  const plot = new uPlot(
    {
      width: widthOf(el),
      height: HEIGHT,
      tzDate: utc,
      cursor: { drag: { x: false, y: false } },
      hooks: {
        // Where the value axis starts, for people inspecting the page and for the browser tests.
        setScale: [
          (u: uPlot, key: string) => {
            if (key === 'y') el.dataset.yMin = String(u.scales.y?.min);
          },
        ],
      },
      scales: {
        x: { time: true, range: [xs[0]!, xs.at(-1)!] },
        y: { range: fromZero },
        right: { range: fromZero },
      },
      axes: [
        {
          // Room for a whole date on every tick over a year (ticks.ts), for month and day otherwise.
          space: xs.at(-1)! - xs[0]! > 366 * 86_400 ? 80 : 60,
          values: (_u, vals) => {
            const labels = tickLabels(vals);
            // The ticks drawn, for people inspecting the page and for the browser tests.
            el.dataset.ticks = JSON.stringify(labels);
            return labels;
          },
        },
        yAxis('y', 3, axisNames[0]),
        ...(series.some((s) => s.axis === 'right') ? [yAxis('right', 1, axisNames[1])] : []),
      ],
      series: [
        {
          label: 'Date',
          value: (_u, v) => (v == null ? period : isoDate(v)),
        },
        ...series.map((s) => ({
          label: s.label,
          scale: s.axis === 'right' ? 'right' : 'y',
          stroke: s.color,
          width: s.dotted ? 1.5 : 2,
          ...(s.dotted ? { dash: [2, 4] } : {}),
          // Points on short periods, so that a lone day between gaps is still seen.
          points: { show: !s.dotted && xs.length <= 92, size: 5 },
          value: (_u: uPlot, v: number | null, _s: number, idx: number | null) =>
            idx == null ? s.summary : v == null ? '—' : fmt(v) + unit,
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
