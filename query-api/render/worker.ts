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
  type RenderResult,
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
  params: Record<string, unknown>;
  list: ListContext;
}

export type WorkerReply =
  | {
      ready: true;
      /** Linux thread id, for the pool to read this thread's CPU time; -1 elsewhere. */ tid: number;
    }
  | { id: number; miss: true }
  | { id: number; compiled: true }
  | { id: number; result: RenderResult; stats: CacheStats }
  | { id: number; error: { kind: 'render' | 'params' | 'internal'; reason: string }; stats: CacheStats };

const port = parentPort!;
const options = workerData as WorkerOptions;
let current = 0;
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
    const result = renderer.render({ template, params: trustSanitized(task.params), list: task.list });
    reply = { id: task.id, result, stats: renderer.cacheStats() };
  } catch (err) {
    const error =
      err instanceof TemplateRenderError
        ? { kind: 'render' as const, reason: err.reason }
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
