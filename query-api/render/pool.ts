/**
 * Compiles and renders templates off the event loop (docs/api.md "Render limits"), in a small pool of worker threads
 * (node:worker_threads; piscina was considered, but the pool needs per-task kills with a reason, a
 * template-to-worker preference and a two-step send of the template, which are a few lines here).
 *
 * - Cheap checks first, in this thread, once per version (limits.ts): size, mustaches, nesting.
 * - Each task may run RENDER_TIME_LIMIT_MS on its worker; past that the worker is terminated. Each worker's
 *   V8 heap is capped (`resourceLimits`), so a render that allocates too much ends that worker, not the
 *   process. Either way the request answers 17007, and a fresh worker takes the dead one's place.
 * - A worker may hold one more task queued behind a cheap one it runs (QUEUE_BEHIND_MS), so it starts it
 *   without waiting for this thread; that task's limits count from when it starts (the previous one's end),
 *   and if its worker is ended before it started it is sent again (once) instead of failed.
 * - A version that used up its budget while compiling (not rendering: that depends on the params) is
 *   refused from then on without being tried again.
 * - Compiled templates are cached in the workers (engine.ts), per account, template and version. A task
 *   goes to the worker its template hashes to when that worker is free, so a version is normally compiled
 *   once; when it is busy another free worker takes the task (and compiles it too) rather than keep the
 *   request waiting behind a heavy template.
 * - Fair shares (docs/api.md, render limits): each task belongs to a tenant (the calling user); no tenant
 *   holds more than half of the workers, and a freed worker takes the next task round-robin across the
 *   tenants below that cap, so one tenant's heavy renders never queue another tenant's behind them. The
 *   queue is bounded (a tenant may fill at most half of it) and a task waits at most the queue deadline:
 *   either refusal is a RenderBusyError (503 with Retry-After at the HTTP edge), counted by reason.
 * - What crosses threads is kept small: the params as the JSON text checkParams() already made, and the
 *   answer as the UTF-8 bytes of its JSON in a transferred buffer (renderAnswer(): the REST route writes
 *   them as the body; render() parses them for callers that want the object).
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../shared/log.js';
import { countRenderRejected } from '../../shared/metrics.js';
import { JsonAnswer } from '../api12/json-answer.js';
import {
  ParamsTooLargeError,
  TemplateRenderError,
  checkParams,
  sanitizedJson,
  type CacheStats,
  type RenderInput,
  type RenderResult,
} from './engine.js';
import { TICK_MS, cpuTicksOfThread } from './cpu.js';
import {
  RENDER_MEMORY_LIMIT_MB,
  RENDER_TIME_LIMIT_MS,
  measureTemplate,
} from '../../shared/template-limits.js';
import type { TemplateKey, WorkerOptions, WorkerReply, WorkerTask } from './worker.js';

export interface RenderPoolOptions {
  /** Worker threads (default: the number of cores, at least 2, at most 4). */
  size?: number;
  timeLimitMs?: number;
  /** Heap one compile + render may use; the worker's heap cap adds its baseline and its cache. */
  memoryLimitMb?: number;
  /** Each worker's compiled-template cache, in MiB of weighed cost (engine.ts MUSTACHE_COST). */
  cacheMb?: number;
  /** Tasks waiting for a worker, over all tenants; one tenant may fill at most half (default 200). */
  queueLength?: number;
  /** How long a task may wait for a worker before it is refused (default 5 s). */
  queueDeadlineMs?: number;
  log?: Logger;
}

export type RejectReason = 'queue_full' | 'deadline';

/**
 * No worker for this task in time: the queue (or the tenant's half of it) is full, or the task waited past
 * the queue deadline. The request may be sent again after `retryAfterSeconds`.
 */
export class RenderBusyError extends Error {
  constructor(
    readonly reason: RejectReason,
    readonly retryAfterSeconds: number,
  ) {
    super('Service unavailable: render workers busy');
    this.name = 'RenderBusyError';
  }
}

export const DEFAULT_QUEUE_LENGTH = 200;
export const DEFAULT_QUEUE_DEADLINE_MS = 5_000;

export interface PoolStats {
  workers: number;
  /** Workers running a task now. */
  busy: number;
  queued: number;
  /** Tasks refused without a worker, by reason. */
  rejected: Record<RejectReason, number>;
  /** Workers ended for exceeding the time or the memory limit, or that died otherwise. */
  killed: { time: number; memory: number; other: number };
  /** Template versions refused by the cheap checks or after exceeding the budget while compiling. */
  refusedVersions: number;
  /** Summed over the workers' caches. */
  cache: CacheStats;
}

/** Heap of a worker with Handlebars, date-fns and its locales loaded, rounded up (measured: 16 MiB). */
const WORKER_BASE_MB = 32;
const PRECHECK_ENTRIES = 10_000;
/**
 * The limit is CPU time of the worker's thread (Linux /proc; wall-clock time elsewhere). A starved
 * machine may give that thread little CPU: past this many times the limit in wall-clock time the task
 * ends anyway, so no request waits without bound.
 */
const WALL_FACTOR = 10;
/**
 * The worker thread's CPU is first read this long after a task starts, and the task is charged this much
 * for the time before: an upper bound, as the worker is idle between tasks. Most renders end sooner, so
 * they cost no /proc read at all.
 */
const SAMPLE_MS = 50;
/**
 * A worker may hold one task queued behind the one it runs, so it starts the next render as soon as the
 * previous one ends instead of waiting for the event loop to take its answer and send another. Only behind
 * a render that is cheap — its template's last render took less than this, and it started less than this
 * ago — and only the task the round-robin would give that worker next: no render waits behind a heavy one,
 * and the per-user shares and order stay as without it.
 */
const QUEUE_BEHIND_MS = 5;
const DURATION_ENTRIES = 10_000;

interface Task {
  id: number;
  /** Whose task it is, for the per-tenant cap and the round-robin ('' when the caller named none). */
  tenant: string;
  /** In the pool's queue, not sent to a worker yet. */
  waiting: boolean;
  /** The queue deadline's timer, while the task waits (set only when it did not start at once). */
  deadline: NodeJS.Timeout | undefined;
  key: TemplateKey;
  input: RenderInput;
  /** The sanitized params' JSON text. */
  params: string;
  /** Set once the worker asked for the source: the version is being compiled. */
  compiling: boolean;
  /** When the task started on its worker (performance.now() of this thread). */
  startedAt: number;
  /** Sent again once after its worker was ended before it started. */
  retried: boolean;
  resolve(r: JsonAnswer<RenderResult>): void;
  reject(e: Error): void;
}

interface Slot {
  index: number;
  worker: Worker;
  ready: boolean;
  /** Linux thread id of the worker (-1: unknown), and its CPU ticks SAMPLE_MS into the current task. */
  tid: number;
  cpuSample: number;
  /** CPU charged for the time before the first sample (at least SAMPLE_MS). */
  charge: number;
  task: Task | undefined;
  /** The task queued in the worker behind `task`, not started yet (see QUEUE_BEHIND_MS). */
  next: Task | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Why the pool ended this worker, when it did. */
  killedFor: 'time' | undefined;
  stats: CacheStats;
}

const EMPTY_STATS: CacheStats = { entries: 0, bytes: 0, compiles: 0, hits: 0, misses: 0, evictions: 0 };

export class RenderPool {
  private readonly slots: Slot[] = [];
  /** Waiting tasks per tenant; Map order is the round-robin order (a tenant just served goes last). */
  private readonly queues = new Map<string, Task[]>();
  private queued = 0;
  /** Tasks running on a worker, per tenant (absent: none). */
  private readonly running = new Map<string, number>();
  private readonly perTenantWorkers: number;
  private readonly queueLength: number;
  private readonly queueDeadlineMs: number;
  private readonly rejected: Record<RejectReason, number> = { queue_full: 0, deadline: 0 };
  /** Per account/template: the last version checked and its problem (undefined: fits). Map order is LRU. */
  private readonly checked = new Map<string, { version: string; type: string; problem?: string }>();
  /** Per account/template: the last version rendered and how long that took, in ms (Map order is LRU). */
  private readonly durations = new Map<string, { version: string; ms: number }>();
  private readonly timeLimitMs: number;
  private readonly memoryLimitMb: number;
  private readonly workerOptions: WorkerOptions;
  private readonly log: Logger | undefined;
  private readonly killed = { time: 0, memory: 0, other: 0 };
  private nextId = 1;
  private closed = false;
  /** Every worker has loaded the engine at least once (a worker replaced later does not undo it). */
  private startedOnce = false;

  constructor(opts: RenderPoolOptions = {}) {
    const size = opts.size ?? Math.min(4, Math.max(2, availableParallelism()));
    this.timeLimitMs = opts.timeLimitMs ?? RENDER_TIME_LIMIT_MS;
    this.memoryLimitMb = opts.memoryLimitMb ?? RENDER_MEMORY_LIMIT_MB;
    const cacheMb = opts.cacheMb ?? 32;
    this.workerOptions = { cacheCost: cacheMb * 2 ** 20, cacheEntries: 1000 };
    this.log = opts.log;
    // Half of the workers, rounded down, but at least one: with 2 workers a tenant holds 1.
    this.perTenantWorkers = Math.max(1, Math.floor(size / 2));
    this.queueLength = opts.queueLength ?? DEFAULT_QUEUE_LENGTH;
    this.queueDeadlineMs = opts.queueDeadlineMs ?? DEFAULT_QUEUE_DEADLINE_MS;
    for (let i = 0; i < size; i++) this.slots.push(this.spawn(i));
  }

  /** Renders in a worker; rejects with TemplateRenderError (17007) or ParamsTooLargeError like the engine. */
  async render(input: RenderInput & { tenant?: string }): Promise<RenderResult> {
    return (await this.renderAnswer(input)).value();
  }

  /**
   * render(), answered as the JSON bytes of the RenderResult (made in the worker): what the REST route
   * sends as they are, without cloning or serialising the content on the event loop.
   */
  renderAnswer(input: RenderInput & { tenant?: string }): Promise<JsonAnswer<RenderResult>> {
    if (this.closed) return Promise.reject(new Error('the render pool is closed'));
    const t = input.template;
    const problem = this.precheck(t);
    if (problem) return Promise.reject(new TemplateRenderError(problem));
    let params: string;
    try {
      // A no-op for params the handler already checked (checkParams) or sanitized: their JSON text was
      // kept then.
      const checked = checkParams(input.params);
      params = sanitizedJson(checked) ?? JSON.stringify(checked);
    } catch (err) {
      return Promise.reject(err as ParamsTooLargeError);
    }
    const key = {
      accountId: t.accountId,
      templateId: t.templateId,
      version: t.version,
      contentType: t.contentType,
    };
    const tenant = input.tenant ?? '';
    const waiting = this.queues.get(tenant);
    // A tenant may fill at most half of the queue, so another tenant always finds room in it.
    const tenantRoom = Math.max(1, Math.floor(this.queueLength / 2));
    const mustWait = this.freeSlots() === 0 || (this.running.get(tenant) ?? 0) >= this.perTenantWorkers;
    if (mustWait && (this.queued >= this.queueLength || (waiting?.length ?? 0) >= tenantRoom)) {
      return Promise.reject(this.refuse('queue_full'));
    }
    return new Promise<JsonAnswer<RenderResult>>((resolve, reject) => {
      const task: Task = {
        id: this.nextId++,
        tenant,
        waiting: true,
        deadline: undefined,
        key,
        input,
        params,
        compiling: false,
        startedAt: 0,
        retried: false,
        resolve,
        reject,
      };
      if (waiting) waiting.push(task);
      else this.queues.set(tenant, [task]);
      this.queued++;
      this.pump();
      if (task.waiting) {
        task.deadline = setTimeout(() => this.expire(task), this.queueDeadlineMs);
        task.deadline.unref();
      }
    });
  }

  private refuse(reason: RejectReason): RenderBusyError {
    this.rejected[reason]++;
    countRenderRejected(reason);
    return new RenderBusyError(reason, Math.max(1, Math.ceil(this.queueDeadlineMs / 1000)));
  }

  /** The task waited past the deadline: out of the queue, refused. */
  private expire(task: Task): void {
    // The deadline is for waiting behind other renders (load); while workers still load the engine, at
    // start or as replacements of workers the limits ended, a render waits for them: that is the pool's own
    // state, not load (readiness reports the pool at start).
    if (!this.closed && (!this.startedOnce || this.slots.some((s) => !s.ready))) {
      task.deadline = setTimeout(() => this.expire(task), this.queueDeadlineMs);
      task.deadline.unref();
      return;
    }
    const waiting = this.queues.get(task.tenant);
    const at = waiting?.indexOf(task) ?? -1;
    if (!waiting || at < 0) return;
    waiting.splice(at, 1);
    if (waiting.length === 0) this.queues.delete(task.tenant);
    this.queued--;
    task.reject(this.refuse('deadline'));
  }

  private freeSlots(): number {
    return this.slots.filter((s) => s.ready && !s.task).length;
  }

  stats(): PoolStats {
    const cache = { ...EMPTY_STATS };
    for (const slot of this.slots) {
      for (const k of Object.keys(cache) as (keyof CacheStats)[]) cache[k] += slot.stats[k];
    }
    let refusedVersions = 0;
    for (const c of this.checked.values()) if (c.problem) refusedVersions++;
    return {
      workers: this.slots.length,
      busy: this.slots.filter((s) => s.task).length,
      queued: this.queued,
      rejected: { ...this.rejected },
      killed: { ...this.killed },
      refusedVersions,
      cache,
    };
  }

  /**
   * For readiness: until every worker has started, a template's own worker may be missing, so another one
   * compiles it too (a second compile of the same version, not an error).
   */
  started(): boolean {
    return this.startedOnce;
  }

  /** Resolves once every worker has loaded the engine (the service starts without waiting for it). */
  async ready(): Promise<void> {
    while (!this.closed && this.slots.some((s) => !s.ready)) await new Promise((r) => setTimeout(r, 10));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiting of this.queues.values()) {
      for (const task of waiting) {
        clearTimeout(task.deadline);
        task.reject(new Error('the render pool is closed'));
      }
    }
    this.queues.clear();
    this.queued = 0;
    await Promise.all(
      this.slots.map((slot) => {
        clearTimeout(slot.timer);
        slot.task?.reject(new Error('the render pool is closed'));
        slot.next?.reject(new Error('the render pool is closed'));
        slot.task = undefined;
        slot.next = undefined;
        return slot.worker.terminate();
      }),
    );
  }

  private precheck(t: RenderInput['template']): string | undefined {
    const k = `${t.accountId}\u0000${t.templateId}`;
    const seen = this.checked.get(k);
    if (seen && seen.version === t.version && seen.type === t.contentType) {
      this.checked.delete(k);
      this.checked.set(k, seen);
      return seen.problem;
    }
    const { problem } = measureTemplate(t);
    this.remember(k, { version: t.version, type: t.contentType, problem });
    return problem;
  }

  private remember(k: string, value: { version: string; type: string; problem?: string }): void {
    this.checked.delete(k);
    this.checked.set(k, value);
    if (this.checked.size > PRECHECK_ENTRIES) this.checked.delete(this.checked.keys().next().value!);
  }

  private spawn(index: number): Slot {
    const worker = startWorker(this.workerOptions, {
      maxOldGenerationSizeMb: WORKER_BASE_MB + this.workerOptions.cacheCost / 2 ** 20 + this.memoryLimitMb,
    });
    // Idle workers must not keep the process alive; close() ends them in an orderly stop.
    worker.unref();
    const slot: Slot = {
      index,
      worker,
      ready: false,
      tid: -1,
      cpuSample: -1,
      charge: SAMPLE_MS,
      task: undefined,
      next: undefined,
      timer: undefined,
      killedFor: undefined,
      stats: EMPTY_STATS,
    };
    let outOfMemory = false;
    worker.on('message', (m: WorkerReply) => this.onMessage(slot, m));
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') outOfMemory = true;
      else this.log?.error({ err }, 'render worker failed');
    });
    worker.on('exit', () => {
      if (this.slots[index] !== slot || this.closed) return;
      clearTimeout(slot.timer);
      const reason = slot.killedFor ?? (outOfMemory ? 'memory' : 'other');
      this.killed[reason]++;
      const task = slot.task;
      const queuedBehind = slot.next;
      slot.task = undefined;
      slot.next = undefined;
      if (task) this.release(task);
      if (task) this.fail(task, reason);
      else if (!slot.ready) this.log?.error('render worker exited while starting');
      // Replace it; a worker that cannot even start is retried after a pause, not in a tight loop.
      const restart = () => {
        if (this.closed) return;
        this.slots[index] = this.spawn(index);
      };
      if (slot.ready) restart();
      else setTimeout(restart, 1_000).unref();
      // The task queued behind had not started (as far as this thread knows): sent again, once, now that
      // the dead worker's slot is no longer there to take it.
      if (queuedBehind) this.sendAgain(queuedBehind, reason);
    });
    return slot;
  }

  /** Back to the head of its tenant's queue, that tenant first in the round-robin. */
  private sendAgain(task: Task, reason: 'time' | 'memory' | 'other'): void {
    if (task.retried) {
      this.fail(task, reason);
      return;
    }
    task.retried = true;
    task.waiting = true;
    const rest = [...this.queues];
    this.queues.clear();
    this.queues.set(task.tenant, [task, ...(rest.find(([t]) => t === task.tenant)?.[1] ?? [])]);
    for (const [t, waiting] of rest) if (t !== task.tenant) this.queues.set(t, waiting);
    this.queued++;
    this.pump();
    if (task.waiting) {
      task.deadline = setTimeout(() => this.expire(task), this.queueDeadlineMs);
      task.deadline.unref();
    }
  }

  private fail(task: Task, reason: 'time' | 'memory' | 'other'): void {
    const what = task.compiling ? 'compiling' : 'rendering';
    if (reason === 'other') {
      task.reject(new Error(`the render worker stopped while ${what} template ${task.key.templateId}`));
      return;
    }
    const limit =
      reason === 'time'
        ? `took longer than the ${this.timeLimitMs / 1000} s limit`
        : `needed more than ${this.memoryLimitMb} MiB of memory`;
    const message = `${what} the template ${limit}`;
    this.log?.warn(
      { account_id: task.key.accountId, template_id: task.key.templateId, version: task.key.version, reason },
      `render worker ended: ${message}`,
    );
    // Compiling does not depend on the params: this version would fail again, so it is refused from now on.
    if (task.compiling) {
      const { accountId, templateId, version, contentType } = task.key;
      this.remember(`${accountId}\u0000${templateId}`, { version, type: contentType, problem: message });
    }
    task.reject(new TemplateRenderError(message));
  }

  private onMessage(slot: Slot, m: WorkerReply): void {
    if ('ready' in m) {
      slot.ready = true;
      slot.tid = m.tid;
      this.startedOnce ||= this.slots.every((s) => s.ready);
      this.pump();
      return;
    }
    const task = slot.task;
    if (!task || task.id !== m.id) return;
    if ('miss' in m) {
      task.compiling = true;
      const { content, props } = task.input.template;
      slot.worker.postMessage(this.message(task, { content, props }));
      return;
    }
    if ('compiled' in m) {
      task.compiling = false;
      return;
    }
    clearTimeout(slot.timer);
    slot.task = undefined;
    this.release(task);
    slot.stats = m.stats;
    // The worker's clock: when this task ended, and so when the one queued behind it started.
    const endedAt = m.at - performance.timeOrigin;
    this.noteDuration(task, m.ms);
    const queuedBehind = slot.next;
    // A worker being ended keeps it: the exit sends it again.
    if (queuedBehind && !slot.killedFor) {
      slot.next = undefined;
      this.running.set(queuedBehind.tenant, (this.running.get(queuedBehind.tenant) ?? 0) + 1);
      this.start(slot, queuedBehind, Math.min(endedAt, performance.now()));
    }
    if ('answer' in m) task.resolve(JsonAnswer.of<RenderResult>(m.answer));
    else if (m.error.kind === 'render')
      task.reject(new TemplateRenderError(m.error.reason, m.error.logReason));
    else if (m.error.kind === 'params') task.reject(new ParamsTooLargeError(m.error.reason));
    else task.reject(new Error(`render worker: ${m.error.reason}`));
    this.pump();
  }

  private message(task: Task, source?: WorkerTask['source']): WorkerTask {
    return { id: task.id, key: task.key, source, params: task.params, list: task.input.list };
  }

  private release(task: Task): void {
    const n = (this.running.get(task.tenant) ?? 1) - 1;
    if (n > 0) this.running.set(task.tenant, n);
    else this.running.delete(task.tenant);
  }

  /**
   * The next task to start: the first tenant in round-robin order that waits and is below its share of
   * the workers; that tenant then goes last.
   */
  private next(): Task | undefined {
    for (const [tenant, waiting] of this.queues) {
      if ((this.running.get(tenant) ?? 0) >= this.perTenantWorkers) continue;
      const task = this.take(tenant, waiting);
      this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
      return task;
    }
    return undefined;
  }

  /**
   * Starts queued tasks on free workers, each on its template's own worker when that one is free; then
   * queues one task behind a cheap running one where the round-robin would give that worker's next task to
   * the same tenant anyway.
   */
  private pump(): void {
    while (this.queued > 0) {
      const free = this.slots.filter((s) => s.ready && !s.task && !s.killedFor);
      if (free.length === 0) break;
      const task = this.next();
      if (!task) break;
      const home = hash(`${task.key.accountId}\u0000${task.key.templateId}`) % this.slots.length;
      const slot = free.find((s) => s.index === home) ?? free[0]!;
      this.start(slot, task, performance.now());
      slot.worker.postMessage(this.message(task));
    }
    if (this.queued === 0) return;
    const now = performance.now();
    for (const slot of this.slots) {
      const current = slot.task;
      if (!slot.ready || slot.killedFor || !current || slot.next || current.compiling) continue;
      if (now - current.startedAt >= QUEUE_BEHIND_MS || !this.isCheap(current)) continue;
      const task = this.nextBehind(current.tenant);
      if (!task) continue;
      slot.next = task;
      slot.worker.postMessage(this.message(task));
      if (this.queued === 0) return;
    }
  }

  /**
   * The task the round-robin would take if a worker of `tenant` freed now, when it is that tenant's (else
   * undefined: the worker is left to take whichever task comes next when it frees). Taken out of the queue;
   * it counts as running once it starts.
   */
  private nextBehind(tenant: string): Task | undefined {
    for (const [t, waiting] of this.queues) {
      const running = (this.running.get(t) ?? 0) - (t === tenant ? 1 : 0);
      if (running >= this.perTenantWorkers) continue;
      if (t !== tenant) return undefined;
      return this.take(t, waiting);
    }
    return undefined;
  }

  /** The head of `tenant`'s queue, out of the pool's queue; the tenant goes last in the round-robin. */
  private take(tenant: string, waiting: Task[]): Task {
    const task = waiting.shift()!;
    this.queues.delete(tenant);
    if (waiting.length > 0) this.queues.set(tenant, waiting);
    this.queued--;
    task.waiting = false;
    clearTimeout(task.deadline);
    return task;
  }

  private isCheap(task: Task): boolean {
    const last = this.durations.get(`${task.key.accountId}\u0000${task.key.templateId}`);
    return last !== undefined && last.version === task.key.version && last.ms < QUEUE_BEHIND_MS;
  }

  private noteDuration(task: Task, ms: number): void {
    const k = `${task.key.accountId}\u0000${task.key.templateId}`;
    this.durations.delete(k);
    this.durations.set(k, { version: task.key.version, ms });
    if (this.durations.size > DURATION_ENTRIES) this.durations.delete(this.durations.keys().next().value!);
  }

  /**
   * `task` runs on `slot` from `startedAt` (its CPU limit counts from then). The worker thread's CPU is
   * first read SAMPLE_MS after that, charging SAMPLE_MS for the time before; a task this thread learns of
   * late (queued behind another whose answer waited in the event loop) is read at once and charged the
   * whole wall-clock time since it started, an upper bound of its CPU.
   */
  private start(slot: Slot, task: Task, startedAt: number): void {
    slot.task = task;
    task.startedAt = startedAt;
    const late = performance.now() - startedAt;
    slot.charge = Math.max(SAMPLE_MS, late);
    const first = Math.min(SAMPLE_MS, this.timeLimitMs);
    slot.timer = setTimeout(() => this.sampleCpu(slot, task), Math.max(0, first - late));
  }

  private sampleCpu(slot: Slot, task: Task): void {
    if (slot.task !== task) return;
    slot.cpuSample = cpuTicksOfThread(slot.tid);
    this.checkTime(slot, task);
  }

  /** Ends the worker once its task used the CPU budget, else looks again when it could have. */
  private checkTime(slot: Slot, task: Task): void {
    if (slot.task !== task) return;
    const wall = performance.now() - task.startedAt;
    const now = slot.cpuSample >= 0 ? cpuTicksOfThread(slot.tid) : -1;
    const cpu = now >= 0 ? (now - slot.cpuSample) * TICK_MS + slot.charge : wall;
    if (cpu >= this.timeLimitMs || wall >= this.timeLimitMs * WALL_FACTOR) {
      slot.killedFor = 'time';
      void slot.worker.terminate();
      return;
    }
    slot.timer = setTimeout(() => this.checkTime(slot, task), Math.max(20, this.timeLimitMs - cpu));
  }
}

/** FNV-1a: a stable, cheap spread of templates over workers. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The worker runs worker.js next to this file in compiled JavaScript. From TypeScript sources (tsx, vitest)
 * there is no loader in a fresh worker, so a bootstrap registers tsx there first.
 */
function startWorker(workerData: WorkerOptions, resourceLimits: Worker['resourceLimits']): Worker {
  const ts = import.meta.url.endsWith('.ts');
  const entry = new URL(ts ? './worker.ts' : './worker.js', import.meta.url);
  if (!ts) return new Worker(entry, { workerData, resourceLimits });
  const tsx = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const bootstrap = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits, execArgv: [] });
}
