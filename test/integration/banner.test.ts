// Modes: embedded only — the start banner of an embedded start (DATA_DIR/ingest-token, the demo seeded)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO } from '../../ingest/demo-seed.js';
import { printBanner } from '../../service/banner.js';
import { loadConfig } from '../../shared/config.js';
import { startupOutput } from '../support/startup-output.js';

const startMain = (env: Record<string, string>) => startupOutput(env, /ingest: .*\n/);

/**
 * `npm start`'s banner says where the ingest token is kept, never the token itself (docs/operations.md "Start-up"), and
 * the start-up log lines do not carry it either.
 */
describe('start-up banner', () => {
  it('a generated token: the banner names DATA_DIR/ingest-token, and the token appears nowhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-banner-'));
    try {
      const output = await startMain({ DATA_DIR: dir, LOG_LEVEL: 'debug' });
      expect(output).toMatch(/ingest: .*the token is in .*ingest-token/);
      const token = readFileSync(join(dir, 'ingest-token'), 'utf8').trim();
      expect(token.length).toBeGreaterThan(20);
      expect(output).not.toContain(token);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a configured token: the banner names INGEST_TOKEN, not its value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailstats-banner-'));
    try {
      const output = await startMain({
        DATA_DIR: dir,
        LOG_LEVEL: 'debug',
        INGEST_TOKEN: 'configured-token-3f9a1c-0123456789abcdef',
      });
      expect(output).toMatch(/ingest: .*the token is INGEST_TOKEN/);
      expect(output).not.toContain('configured-token-3f9a1c-0123456789abcdef');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** printBanner's lines, as `npm start` prints them. */
function bannerOf(
  env: Record<string, string>,
  service: { url: string | undefined; seeded: boolean; demoPresent?: boolean },
) {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => lines.push(args.join(' '));
  try {
    printBanner(loadConfig(env), { demoPresent: service.seeded, ...service });
  } finally {
    console.log = log;
  }
  return lines.join('\n');
}

describe('start-up banner: what it shows and what it hides', () => {
  it('CLICKHOUSE_URL: user and password are not printed, the host and port are', () => {
    const out = bannerOf(
      { CLICKHOUSE_URL: 'http://alice:s3cr3t-pw@127.0.0.1:8123/?x=1' },
      { url: 'http://127.0.0.1:8080', seeded: false },
    );
    expect(out).toContain('127.0.0.1:8123');
    expect(out).not.toContain('alice');
    expect(out).not.toContain('s3cr3t-pw');
  });
  it('names the dashboard and the API docs, and how to sign in to the demo', () => {
    const out = bannerOf({ DATA_DIR: '/tmp/x' }, { url: 'http://127.0.0.1:8080', seeded: true });
    expect(out).toMatch(
      new RegExp(
        `dashboard: +http://127\\.0\\.0\\.1:8080/dashboard/ .*user_id ${DEMO.userId}.*${DEMO.apiKey}`,
      ),
    );
    expect(out).toMatch(/docs: +http:\/\/127\.0\.0\.1:8080\/docs/);
  });
  it("the README's example banner is what `npm start` prints on a first start with the defaults", () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
    const block = /```\n(mailstats is running [^`]*?)\n```/.exec(readme)?.[1];
    expect(block, "README.md's example banner block").toBeDefined();
    const printed = bannerOf({}, { url: 'http://127.0.0.1:8080', seeded: true });
    const labels = (text: string) => [...text.matchAll(/^ {2}([a-zA-Z ]+):/gm)].map((m) => m[1]);
    expect(labels(block!)).toEqual(labels(printed));
    expect(block).toBe(printed);
  });
  it('after the demo was removed (a record of your own), a restart prints no demo key, and says why', () => {
    const out = bannerOf(
      { DATA_DIR: '/tmp/x' },
      { url: 'http://127.0.0.1:8080', seeded: false, demoPresent: false },
    );
    expect(out).not.toContain(DEMO.apiKey);
    expect(out).not.toContain('try:');
    expect(out).toMatch(/demo tenant: +none — this store holds records of your own .*removes it/);
    const still = bannerOf(
      { DATA_DIR: '/tmp/x' },
      { url: 'http://127.0.0.1:8080', seeded: false, demoPresent: true },
    );
    expect(still).toContain(`api_key ${DEMO.apiKey}`);
  });
});
