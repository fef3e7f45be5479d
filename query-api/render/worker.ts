/**
 * A render worker thread (see pool.ts): one TemplateRenderer with its compiled-template cache, one task at
 * a time (the pool may have sent the next one already: it waits in this thread's message queue, and runs
 * as soon as the one before ends). The pool sends a task without the template's content first; the worker
 * answers `miss` when it has not compiled that version, and the pool sends it again with the content. So a
 * 20 KB template crosses the thread boundary once per version and worker, not once per request.
 */
import { readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import {
  ParamsTooLargeError,
  TemplateRenderError,
  TemplateRenderer,
  trustSanitized,
  type CacheStats,
  type ListContext,
  type StoredTemplate,
} from './engine.js';
import { dateLocales } from './helpers.js';

export interface WorkerOptions {
  /** Cache bound in bytes + MUSTACHE_COST per mustache (engine.ts). */
  cacheCost: number;
  cacheEntries: number;
}

export type TemplateKey = Pick<StoredTemplate, 'accountId' | 'templateId' | 'version' | 'contentType'>;

export interface WorkerTask {
  id: number;
  key: TemplateKey;
  /** Content and props: only when the worker answered `miss` for this task. */
  source?: Pick<StoredTemplate, 'content' | 'props'>;
  /** The sanitized params as their JSON text (engine.ts sanitizedJson): a string clones cheaper than a graph. */
  params: string;
  list: ListContext;
}

export type WorkerReply =
  | {
      ready: true;
      /** Linux thread id, for the pool to read this thread's CPU time; -1 elsewhere. */ tid: number;
    }
  | { id: number; miss: true }
  | { id: number; compiled: true }
  /**
   * The RenderResult as the UTF-8 bytes of its JSON text (what `res.json` would send), in a buffer of its
   * own that is transferred, not copied: the event loop neither clones the rendered content nor
   * serialises it again. `at`: when the task ended (see now()); `ms`: how long it ran here, compile
   * included.
   */
  | { id: number; answer: Uint8Array; stats: CacheStats; at: number; ms: number }
  | {
      id: number;
      at: number;
      ms: number;
      /** logReason: the reason without param values (render errors only). */
      error: { kind: 'render' | 'params' | 'internal'; reason: string; logReason?: string };
      stats: CacheStats;
    };

const port = parentPort!;
/**
 * Wall-clock time (ms since the epoch, fractional) at which a task ended: the next task the pool queued on
 * this thread starts right after, and its CPU limit counts from then.
 */
const now = () => performance.timeOrigin + performance.now();
const options = workerData as WorkerOptions;
let current = 0;
const utf8 = new TextEncoder();
const renderer = new TemplateRenderer({
  maxEntries: options.cacheEntries,
  maxCost: options.cacheCost,
  onCompile: () => port.postMessage({ id: current, compiled: true } satisfies WorkerReply),
});

/**
 * After a `miss`, the task the pool queued behind it waits here until the missing source arrives, so the
 * tasks run (and answer) in the order they were sent.
 */
let awaiting = 0;
const held: WorkerTask[] = [];

port.on('message', (task: WorkerTask) => {
  if (awaiting !== 0 && task.id !== awaiting) {
    held.push(task);
    return;
  }
  awaiting = 0;
  run(task);
  while (awaiting === 0 && held.length > 0) run(held.shift()!);
});

function run(task: WorkerTask): void {
  current = task.id;
  if (!task.source && !renderer.has(task.key)) {
    awaiting = task.id;
    port.postMessage({ id: task.id, miss: true } satisfies WorkerReply);
    return;
  }
  // Without the source the cached entry is used: has() said it is there, and nothing ran since.
  const template: StoredTemplate = { ...task.key, content: '', props: null, ...task.source };
  const started = now();
  let reply: WorkerReply;
  try {
    const params = trustSanitized(JSON.parse(task.params) as Record<string, unknown>);
    const result = renderer.render({ template, params, list: task.list });
    // TextEncoder gives a fresh ArrayBuffer (Buffer.from may share its pool's, which must not be moved).
    const answer = utf8.encode(JSON.stringify(result));
    const at = now();
    port.postMessage(
      { id: task.id, answer, stats: renderer.cacheStats(), at, ms: at - started } satisfies WorkerReply,
      [answer.buffer],
    );
    return;
  } catch (err) {
    const error =
      err instanceof TemplateRenderError
        ? { kind: 'render' as const, reason: err.reason, logReason: err.logReason }
        : err instanceof ParamsTooLargeError
          ? { kind: 'params' as const, reason: err.reason }
          : // A stack overflow inside Handlebars, or a bug: the template is at fault as far as we know.
            err instanceof RangeError
            ? { kind: 'render' as const, reason: err.message }
            : {
                kind: 'internal' as const,
                reason: err instanceof Error ? (err.stack ?? err.message) : String(err),
              };
    const at = now();
    reply = { id: task.id, error, stats: renderer.cacheStats(), at, ms: at - started };
  }
  port.postMessage(reply);
}

let tid = -1;
try {
  tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
} catch {
  // Not Linux: the pool falls back to wall-clock time.
}
// The date locales before the first task, so that no render's time limit pays for loading them.
dateLocales();
port.postMessage({ ready: true, tid } satisfies WorkerReply);
