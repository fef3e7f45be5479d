import express, { type Request, type Response } from 'express';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { DecodedItem, IngestSink } from '../ingest/sink.js';
import type { DeadLetter } from '../shared/dead-letter.js';
import type { Logger } from '../shared/log.js';
import { countIngest } from '../shared/metrics.js';
import { ApiError } from '../shared/errors.js';
import { parseErasureTime } from '../shared/erasure-time.js';
import { requireBearer } from './bearer-token.js';
import { readBody } from './body.js';

/** One list's part of an erasure, as answered. */
export interface ErasedList {
  list_id: number;
  subscribers: number;
  deleted: number;
}

/** What the admin endpoints do; the composition root provides them (docs/lifecycle.md). */
export interface AdminActions {
  /** Where imported records go: the same sink as POST /ingest. */
  sink: IngestSink;
  /** `erasedAt` (epoch ms, never in the future): an earlier erasure replayed with its original time. */
  erase(pairs: { list_id: number; subscriber_id: number; erasedAt?: number }[]): Promise<ErasedList[]>;
  /** The erasure log: per erased (list, subscriber) its latest erasure time (epoch ms). */
  erasureLog(): Promise<{ list_id: number; subscriber_id: number; erasedAt: number }[]>;
  backup(dir: string): Promise<{ dir: string; schema_version: number }>;
  /** Undefined without KAFKA_BROKERS. */
  deadLetters?: (
    filter: { reason?: string; since?: number },
    each: (letter: DeadLetter) => Promise<void> | void,
  ) => Promise<void>;
}

/** A client's mistake on an admin endpoint: 400 with the message, never a 500. */
export class AdminRequestError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Imports are sent in chunks; a chunk of 50,000 records of a few hundred bytes fits comfortably. */
const IMPORT_BODY_LIMIT = '64mb';
const JSON_BODY_LIMIT = '16mb';
const MAX_ERASE_PAIRS = 100_000;
/** Erased pairs per audit line: a large `erase --file` writes several lines, none over ~60 KB. */
const AUDIT_PAIRS_PER_LINE = 1_000;

/** The admin token (ADMIN_TOKEN), checked before any body is read (docs/lifecycle.md). */
export const requireAdminToken = (token: string) => requireBearer(token, 'Missing or wrong admin token');

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/** An erasure's time (shared/erasure-time.ts): RFC 3339 with an offset, or epoch ms from 2000 on; never in the future. */
const erasedAt = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const t = parseErasureTime(v);
  if ('problem' in t) {
    ctx.addIssue({ code: 'custom', message: t.problem });
    return z.NEVER;
  }
  if (t.ms > Date.now()) {
    ctx.addIssue({ code: 'custom', message: `${new Date(t.ms).toISOString()} is in the future` });
    return z.NEVER;
  }
  return t.ms;
});
const eraseBody = z.object({
  pairs: z
    .array(z.object({ list_id: id, subscriber_id: id, erased_at: erasedAt.optional() }))
    .min(1, 'give at least one list_id, subscriber_id pair')
    .max(MAX_ERASE_PAIRS, `at most ${MAX_ERASE_PAIRS} pairs per request`),
});
const backupBody = z.object({
  dir: z
    .string()
    .min(1)
    .refine((d) => d.startsWith('/'), 'must be an absolute path'),
});
/** An import's id (`?import_id=`, one per `import` run and file): its first chunk writes the start line. */
const importId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8-64 letters, digits, _ or -');
const importChunk = z.object({
  import_id: importId.optional(),
  file: z.string().max(4096).optional(),
  from_line: z.coerce.number().int().min(0).optional(),
});
const importSummary = z.object({
  import_id: importId.optional(),
  file: z.string().max(4096),
  accepted: z.number().int().min(0),
  rejected: z.number().int().min(0),
  seconds: z.number().min(0),
  finished: z.boolean(),
});

const unreadable = (reason: string) => new ApiError(400, 400, `Unreadable body: ${reason}`);

function jsonBody<T>(req: Request, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
  } catch (err) {
    throw unreadable(`not JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ApiError(
      400,
      400,
      parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  return parsed.data;
}

/**
 * An import chunk is NDJSON, line by line, always: unlike POST /ingest it is never read as one JSON
 * array, so a chunk of one line `[…]` is that line's rejection. Lines count from 1; blank ones are skipped.
 */
function ndjsonChunk(text: string): DecodedItem[] {
  const items: DecodedItem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      items.push({ line: i + 1, value: JSON.parse(line) as unknown });
    } catch (err) {
      items.push({ line: i + 1, error: `not valid JSON: ${(err as Error).message}` });
    }
  }
  return items;
}

/** Express 5 passes a rejected promise to the error handler; an AdminRequestError becomes a 4xx. */
const handle =
  (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      if (err instanceof AdminRequestError) throw new ApiError(err.status, err.status, err.message);
      throw err;
    }
  };

/**
 * The admin endpoints under /admin (docs/lifecycle.md): import chunks, erase, backup, dead letters.
 * Each action writes one audit line (what, which lists, counts), never a token or a record.
 */
export function adminRouter(deps: { token: string; actions: AdminActions; log: Logger }): express.Router {
  const { actions, log } = deps;
  const router = express.Router();
  router.use(requireAdminToken(deps.token));
  /**
   * Imports whose start line was written, with what this process counted of them for the end line
   * (bounded: an id forgotten long after writes its start line again).
   */
  const started = new LRUCache<string, { accepted: number; rejected: number; chunks: number }>({
    max: 10_000,
  });

  router.post(
    '/import',
    readBody(IMPORT_BODY_LIMIT, unreadable),
    handle(async (req, res) => {
      const query = importChunk.safeParse(req.query);
      if (!query.success)
        throw new AdminRequestError(
          query.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        );
      // The start line before anything is written: an import killed at any point leaves at least it.
      // A chunk without an import id is an import of its own.
      const { import_id, file, from_line } = query.data;
      if (import_id === undefined || !started.has(import_id)) {
        if (import_id !== undefined) started.set(import_id, { accepted: 0, rejected: 0, chunks: 0 });
        log.info(
          {
            audit: 'import',
            phase: 'start',
            import_id,
            file,
            ...(from_line ? { resumed_after_line: from_line } : {}),
          },
          'admin action',
        );
      }
      const items = ndjsonChunk(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
      const result = await actions.sink.ingest(items);
      const counts = import_id === undefined ? undefined : started.get(import_id);
      if (counts) {
        counts.accepted += result.accepted;
        counts.rejected += result.rejected.length;
        counts.chunks++;
      }
      log.debug({ accepted: result.accepted, rejected: result.rejected.length }, 'admin import chunk');
      res.json(countIngest('http', result));
    }),
  );

  router.post(
    '/import/summary',
    readBody(JSON_BODY_LIMIT, unreadable),
    handle(async (req, res) => {
      const s = jsonBody(req, importSummary);
      // The counts are the service's own, of the chunks this process stored for the import; what the
      // CLI says it saw is kept apart (a client may post anything).
      const counted = s.import_id === undefined ? undefined : started.get(s.import_id);
      if (s.import_id !== undefined) started.delete(s.import_id);
      const { accepted, rejected, seconds, finished, ...about } = s;
      log.info(
        {
          audit: 'import',
          phase: 'end',
          ...about,
          accepted: counted?.accepted ?? 0,
          rejected: counted?.rejected ?? 0,
          chunks: counted?.chunks ?? 0,
          client_reported: { accepted, rejected, seconds, finished },
        },
        'admin action',
      );
      res.json({ ok: true });
    }),
  );

  router.post(
    '/erase',
    readBody(JSON_BODY_LIMIT, unreadable),
    handle(async (req, res) => {
      const { pairs } = jsonBody(req, eraseBody);
      const lists = await actions.erase(
        pairs.map((p) => ({
          list_id: p.list_id,
          subscriber_id: p.subscriber_id,
          ...(p.erased_at === undefined ? {} : { erasedAt: p.erased_at }),
        })),
      );
      const replayed = pairs.filter((p) => p.erased_at !== undefined).length;
      // The audit trail of erasures (docs/lifecycle.md, "Restores and replays"): each pair with the time
      // recorded for it (for an erasure made now, the store's), as `erase --file` lines, at most
      // AUDIT_PAIRS_PER_LINE a line.
      const recorded = new Map<string, number>();
      for (const e of await actions.erasureLog()) recorded.set(`${e.list_id},${e.subscriber_id}`, e.erasedAt);
      const entries = pairs.map((p) => {
        const key = `${p.list_id},${p.subscriber_id}`;
        const at = p.erased_at ?? recorded.get(key);
        return at === undefined ? key : `${key},${new Date(at).toISOString()}`;
      });
      const parts = Math.ceil(entries.length / AUDIT_PAIRS_PER_LINE);
      for (let part = 0; part < parts; part++)
        log.info(
          {
            audit: 'erase',
            lists: lists.map((l) => l.list_id),
            subscribers: lists.reduce((n, l) => n + l.subscribers, 0),
            deleted: lists.reduce((n, l) => n + l.deleted, 0),
            ...(replayed > 0 ? { with_erased_at: replayed } : {}),
            ...(parts > 1 ? { part: part + 1, parts } : {}),
            erasures: entries.slice(part * AUDIT_PAIRS_PER_LINE, (part + 1) * AUDIT_PAIRS_PER_LINE),
          },
          'admin action',
        );
      res.json({ lists });
    }),
  );

  // The erasure log as NDJSON (`erasures export`): kept beside each backup, replayed after a restore.
  router.get(
    '/erasures/export',
    handle(async (_req, res) => {
      const entries = await actions.erasureLog();
      res.setHeader('content-type', 'application/x-ndjson');
      res.end(
        entries
          .map((e) =>
            JSON.stringify({
              list_id: e.list_id,
              subscriber_id: e.subscriber_id,
              erased_at: new Date(e.erasedAt).toISOString(),
            }),
          )
          .map((l) => l + '\n')
          .join(''),
      );
      log.info(
        {
          audit: 'erasures export',
          exported: entries.length,
          lists: new Set(entries.map((e) => e.list_id)).size,
        },
        'admin action',
      );
    }),
  );

  router.post(
    '/backup',
    readBody(JSON_BODY_LIMIT, unreadable),
    handle(async (req, res) => {
      const { dir } = jsonBody(req, backupBody);
      const started = Date.now();
      const done = await actions.backup(dir);
      const seconds = (Date.now() - started) / 1000;
      log.info(
        { audit: 'backup', dir: done.dir, schema_version: done.schema_version, seconds },
        'admin action',
      );
      res.json({ ...done, seconds });
    }),
  );

  const dlqFilter = (req: Request) => {
    const reason = typeof req.query.reason === 'string' ? req.query.reason : undefined;
    const sinceText = typeof req.query.since === 'string' ? req.query.since : undefined;
    const since = sinceText === undefined ? undefined : Date.parse(sinceText);
    if (since !== undefined && !Number.isFinite(since))
      throw new AdminRequestError(`--since "${sinceText}" is not a time (e.g. 2026-11-02T10:00:00Z)`);
    return { reason, since };
  };
  const needKafka = () => {
    if (!actions.deadLetters)
      throw new AdminRequestError('dead letters exist only in Kafka mode (KAFKA_BROKERS is not set)', 409);
    return actions.deadLetters;
  };

  router.get(
    '/dlq/export',
    handle(async (req, res) => {
      const read = needKafka();
      const filter = dlqFilter(req);
      let n = 0;
      res.setHeader('content-type', 'application/x-ndjson');
      await read(filter, async (letter) => {
        n++;
        if (!res.write(JSON.stringify(letter) + '\n'))
          await new Promise<void>((ok) => res.once('drain', () => ok()));
      });
      log.info({ audit: 'dlq export', exported: n, reason: filter.reason }, 'admin action');
      res.end();
    }),
  );

  router.get(
    '/dlq/stats',
    handle(async (req, res) => {
      const read = needKafka();
      const filter = dlqFilter(req);
      const reasons: Record<string, number> = {};
      let total = 0;
      await read(filter, (letter) => {
        total++;
        reasons[letter.reason] = (reasons[letter.reason] ?? 0) + 1;
      });
      log.info({ audit: 'dlq stats', total }, 'admin action');
      res.json({ total, reasons });
    }),
  );

  return router;
}
