/**
 * A list of 50 workflows with activity over the last 700 days (the 690-day view and the big table), as
 * the dashboard's screenshots and its load-time measurement use it. `today` is the list's today
 * (Europe/Bucharest); records fall at noon UTC of each day.
 */
const shift = (d: string, n: number) =>
  new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** Workflow names as shops write them: some short, some long enough to be cut in the table. */
const BIG_NAMES = [
  'Welcome',
  'Abandoned cart — second reminder with a discount code for returning customers',
  'Post-purchase review request',
  'Win-back after 90 days',
  'Birthday',
];

export function bigListRecords(opts: { listId: number; userId: number; today: string }): unknown[] {
  const { listId, userId, today } = opts;
  const records: unknown[] = [
    { type: 'list', list_id: listId, name: 'Big Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { type: 'list_access', user_id: userId, list_id: listId, granted: true },
  ];
  for (let w = 1; w <= 50; w++) {
    const id = listId * 100 + w;
    records.push({ type: 'workflow', workflow_id: id, list_id: listId, name: `${BIG_NAMES[w % 5]} ${w}` });
    for (let offset = 0; offset < 700; offset++) {
      if ((offset + w) % 6 !== 0) continue;
      const at = Date.parse(`${shift(today, -offset)}T12:00:00Z`);
      // A season: more sends in November and December.
      const month = Number(shift(today, -offset).slice(5, 7));
      const sends = 2 + (w % 4) + (month >= 11 ? 3 : 0);
      for (let s = 1; s <= sends; s++) {
        const base = {
          list_id: listId,
          workflow_id: id,
          subscriber_id: (w * 7 + s * 13 + offset) % 900,
          trigger_id: 1 + (w % 3),
        };
        const key = `b${w}-${offset}-${s}`;
        records.push({ type: 'send', event_id: `s${key}`, ...base, timestamp: at });
        if ((s + offset) % 2 === 0)
          records.push({ type: 'open', event_id: `o${key}`, ...base, timestamp: at + 6e5, sent_at: at });
        if ((s + offset) % 7 === 0)
          records.push({ type: 'click', event_id: `c${key}`, ...base, timestamp: at + 9e5, sent_at: at });
        if ((s + offset + w) % 23 === 0)
          records.push({
            type: 'purchase',
            event_id: `p${key}`,
            ...base,
            timestamp: at + 18e5,
            sent_at: at,
            order_id: `o-${key}`,
            value_ron: (89.9 + ((w * 31 + offset) % 400)).toFixed(2),
            value_eur: ((89.9 + ((w * 31 + offset) % 400)) / 5).toFixed(4),
          });
      }
    }
  }
  return records;
}
