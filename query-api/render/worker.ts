/**
 * A render worker thread (see pool.ts): one TemplateRenderer with its compiled-template cache, one task at
 * a time. The pool sends a task without the template's content first; the worker answers `miss` when it
 * has not compiled that version, and the pool sends it again with the content. So a 20 KB template
 * crosses the thread boundary once per version and worker, not once per request.
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
   * serialises it again.
   */
  | { id: number; answer: Uint8Array; stats: CacheStats }
  | {
      id: number;
      /** logReason: the reason without param values (render errors only). */
      error: { kind: 'render' | 'params' | 'internal'; reason: string; logReason?: string };
      stats: CacheStats;
    };

const port = parentPort!;
const options = workerData as WorkerOptions;
let current = 0;
const utf8 = new TextEncoder();
const renderer = new TemplateRenderer({
  maxEntries: options.cacheEntries,
  maxCost: options.cacheCost,
  onCompile: () => port.postMessage({ id: current, compiled: true } satisfies WorkerReply),
});

port.on('message', (task: WorkerTask) => {
  current = task.id;
  if (!task.source && !renderer.has(task.key)) {
    port.postMessage({ id: task.id, miss: true } satisfies WorkerReply);
    return;
  }
  // Without the source the cached entry is used: has() said it is there, and nothing ran since.
  const template: StoredTemplate = { ...task.key, content: '', props: null, ...task.source };
  let reply: WorkerReply;
  try {
    const params = trustSanitized(JSON.parse(task.params) as Record<string, unknown>);
    const result = renderer.render({ template, params, list: task.list });
    // TextEncoder gives a fresh ArrayBuffer (Buffer.from may share its pool's, which must not be moved).
    const answer = utf8.encode(JSON.stringify(result));
    port.postMessage({ id: task.id, answer, stats: renderer.cacheStats() } satisfies WorkerReply, [
      answer.buffer,
    ]);
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
    reply = { id: task.id, error, stats: renderer.cacheStats() };
  }
  port.postMessage(reply);
});

let tid = -1;
try {
  tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
} catch {
  // Not Linux: the pool falls back to wall-clock time.
}
port.postMessage({ ready: true, tid } satisfies WorkerReply);
