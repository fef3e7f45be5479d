/** The charts' dates, written as the page writes every date (YYYY-MM-DD). */

/** A chart's date as the page writes every date: YYYY-MM-DD. */
export const isoDate = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 10);

/**
 * Tick labels: month and day (11-27), with the year on the first tick and on every tick where the year
 * changes (2027-01-01). Over more than a year every tick has its year: "07-01" could be either year's.
 */
export function tickLabels(values: number[]): string[] {
  const long = values.length > 1 && values.at(-1)! - values[0]! > 366 * 86_400;
  let year = '';
  return values.map((v) => {
    const d = isoDate(v);
    if (!long && d.slice(0, 4) === year) return d.slice(5);
    year = d.slice(0, 4);
    return d;
  });
}
