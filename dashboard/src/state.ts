import type { AccountEntry, ListEntry, Session, WorkflowEntry } from './api.js';
import type { StatsRecord } from './stats.js';

/** What the page knows: the session, the list chosen, and the days shown (for the days' CSV export). */

export interface State {
  session: Session | undefined;
  lists: ListEntry[];
  list: ListEntry | undefined;
  workflows: WorkflowEntry[];
  accounts: AccountEntry[];
  /** The records shown, for the CSV exports. */
  days: StatsRecord[];
  /** Bumped on every reload: answers of an older reload are dropped. */
  seq: number;
  /** The charts' points and currency from the page's address, applied when the charts are first drawn. */
  pending: { points?: string; money?: string };
  /** A share link's view: no session, one list, its token in every call (docs/dashboard.md "Sharing"). */
  share: { token: string; workflows: WorkflowEntry[] | undefined } | undefined;
}

export const state: State = {
  session: undefined,
  lists: [],
  list: undefined,
  workflows: [],
  accounts: [],
  days: [],
  seq: 0,
  pending: {},
  share: undefined,
};
