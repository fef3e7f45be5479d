/**
 * The API 1.2 as any client calls it: POST with a JSON body. The api key travels only where the API
 * takes it, in the path (the service never logs paths with keys); it is never put in the page's URL.
 */
export interface Session {
  userId: string;
  apiKey: string;
  /**
   * A share link's token (docs/dashboard.md "Sharing"): the page then reads one list's figures from
   * `/api/share/<token>/…` with GET, without user id or key.
   */
  shareToken?: string;
}

/** The API's error object as it came, or a network failure (code 0). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface ListEntry {
  list_id: string;
  list_name: string;
  timezone: string;
  currency: string;
}
export interface WorkflowEntry {
  workflow_id: number;
  name: string;
}
export interface AccountEntry {
  account_id: string;
  active: boolean;
  is_default: boolean;
  templates: { template_id: string; content_type: 'html' | 'text' }[];
}
export interface RenderAnswer {
  content: string;
  engine: string;
  type: 'html' | 'text';
  props: Record<string, unknown> | null;
}

/** transactional.templateVariables: the params fields a template reads, as paths ("order.id"). */
export interface TemplateVariables {
  variables: string[];
}

const base = '/api/1.2/rest';

/** What a share link answers, by the operation the page would call when signed in. */
const SHARE_PATHS: Record<string, string> = {
  'list.all': 'lists',
  'automation.stats': 'stats',
  'automation.statsTotals': 'totals',
  'automation.statsByWorkflow': 'by-workflow',
};

/** A share link's query: the operation's params, workflow ids comma-separated. */
function shareQuery(params: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined) q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  const text = q.toString().replace(/%2C/g, ',');
  return text ? `?${text}` : '';
}

/** The answer of a share link's read, or the empty answer for what a share link does not offer. */
async function shareCall<T>(token: string, operation: string, params: object): Promise<T> {
  const path = SHARE_PATHS[operation];
  // No catalog, template or render through a share link: the page shows no preview and takes the
  // workflows' names from the figures.
  if (!path) return [] as T;
  const url = `/api/share/${encodeURIComponent(token)}/${path}${path === 'lists' ? '' : shareQuery(params)}`;
  return answerOf<T>(() =>
    fetch(url, {
      headers: { accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
    }),
  );
}

/**
 * `part: 'breakdown'` marks one of the many per-workflow calls of a view, which the service logs at debug
 * when answered (docs/operations.md "Logs"), so one view writes a handful of info lines, not a hundred.
 */
export async function callApi<T>(
  session: Session,
  operation: string,
  params: object = {},
  part?: 'breakdown',
): Promise<T> {
  if (session.shareToken) return shareCall<T>(session.shareToken, operation, params);
  const url = `${base}/${encodeURIComponent(session.userId)}/${encodeURIComponent(session.apiKey)}/${operation}.json`;
  return answerOf<T>(() =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(part ? { 'x-dashboard-part': part } : {}),
      },
      body: JSON.stringify(params),
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
    }),
  );
}

/** The API's answer: its JSON, or its error object as an ApiError. */
async function answerOf<T>(send: () => Promise<Response>): Promise<T> {
  let res: Response;
  try {
    res = await send();
  } catch (err) {
    throw new ApiError(`The service did not answer: ${(err as Error).message}`, 0, 0);
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`The service answered HTTP ${res.status} without JSON`, 0, res.status);
  }
  if (body && typeof body === 'object' && (body as { err?: unknown }).err === true) {
    const e = body as { message: string; code: number };
    throw new ApiError(String(e.message), Number(e.code), res.status);
  }
  if (!res.ok) throw new ApiError(`The service answered HTTP ${res.status}`, 0, res.status);
  return body as T;
}
