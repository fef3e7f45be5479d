import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../shared/config.js';
import { startService, type Service } from '../../service/start.js';
import { serverEnv } from './service.js';

/**
 * A service on a DATA_DIR (or, in the `server` test project, a server database) that outlives it: start, "crash" (every ClickHouse operation fails from a
 * chosen point on, as if the process had died there), close, and start again on the same data.
 */
export class Restartable {
  readonly dir = mkdtempSync(join(tmpdir(), 'mailstats-restart-'));
  svc: Service | undefined;
  /**
   * In the `server` test project (CLICKHOUSE_URL set): the server and a database of this instance's
   * own, the same at every start (the server's counterpart of `dir`). Empty embedded.
   */
  readonly server = serverEnv(this.dir);

  constructor(private readonly env: Record<string, string> = {}) {}

  async start(env: Record<string, string> = {}): Promise<Service> {
    const config = loadConfig({
      DATA_DIR: this.dir,
      PORT: '0',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'silent',
      INGEST_TOKEN: 'restart-token-0123456789abcdef0123',
      ...this.server,
      ...this.env,
      ...env,
    });
    this.svc = await startService(config);
    await this.svc.recovered;
    return this.svc;
  }

  async stop(): Promise<void> {
    const svc = this.svc;
    this.svc = undefined;
    if (svc) {
      svc.db.faultInjector = undefined;
      await svc.close();
    }
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** POST /ingest (NDJSON) to the running service. */
  async ingest(records: unknown[]): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.svc!.url}/ingest`, {
      method: 'POST',
      body: records.map((r) => JSON.stringify(r)).join('\n'),
      headers: {
        'content-type': 'application/x-ndjson',
        authorization: 'Bearer restart-token-0123456789abcdef0123',
      },
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async get(path: string): Promise<any> {
    // A GET is safe to repeat: once more when a kept-alive socket was reset under it (seen once under load).
    const res = await fetch(`${this.svc!.url}${path}`).catch(() => fetch(`${this.svc!.url}${path}`));
    if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${await res.text()}`);
    return res.json();
  }

  /**
   * From the `k`-th ClickHouse operation (1 = the first) after the next insert into `table`: fail it
   * (`mode: 'error'`, that one only) or fail it and every later one (`mode: 'kill'`). `fired()` says
   * whether the fault has happened.
   */
  armAfterInsert(
    table: string,
    k: number,
    mode: 'kill' | 'error',
  ): { fired: () => boolean; statement: () => string | undefined } {
    const db = this.svc!.db;
    let counting = false;
    let n = 0;
    let fired: string | undefined;
    const insert = db.insert.bind(db);
    db.insert = async (t, columns, rows, token) => {
      await insert(t, columns, rows, token);
      if (t === table && !counting && fired === undefined) counting = true;
    };
    db.faultInjector = async (what) => {
      if (fired !== undefined && mode === 'kill') throw new Error('process killed (test)');
      if (!counting) return;
      if (++n === k) {
        fired = what;
        counting = false;
        throw new Error(mode === 'kill' ? 'process killed (test)' : 'ClickHouse failed (test)');
      }
    };
    return { fired: () => fired !== undefined, statement: () => fired };
  }
}
