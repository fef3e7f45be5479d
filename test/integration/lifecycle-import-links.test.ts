import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/admin-cli.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

const ADMIN = 'links-admin-token-0123456789-abcdef0123456789';

/**
 * `import` writes its checkpoint and rejected-lines files beside the file it reads, often in a directory
 * others can write to: links planted under those names are never written through nor truncated
 * (docs/lifecycle.md, "import").
 */
describe('import beside planted links', () => {
  let svc: TestService;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-import-links-'));
  const victim = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const records = (prefix: string) =>
    [
      {
        type: 'send',
        event_id: `${prefix}-1`,
        list_id: 3,
        workflow_id: 1,
        subscriber_id: 5,
        timestamp: 1794304800000,
      },
      { type: 'send' }, // rejected: a line for the rejected file
      {
        type: 'send',
        event_id: `${prefix}-2`,
        list_id: 3,
        workflow_id: 1,
        subscriber_id: 6,
        timestamp: 1794304800000,
      },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n';

  beforeAll(async () => {
    svc = await startTestService({ ADMIN_TOKEN: ADMIN });
    env = { MAILSTATS_URL: svc.url!, ADMIN_TOKEN: ADMIN };
    expect(
      (await svc.ingest(tenant({ userId: 8, apiKey: 'links-key', lists: [{ list_id: 3 }] }))).status,
    ).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('links at the rejected file and the checkpoint temp file are not written through', async () => {
    const file = join(dir, 'a.ndjson');
    writeFileSync(file, records('a'));
    const rejectedTarget = victim('precious-a.txt', 'precious A\n');
    symlinkSync(rejectedTarget, `${file}.rejected.ndjson`);
    const tempTarget = victim('precious-b.txt', 'precious B\n');
    symlinkSync(tempTarget, `${file}.import-checkpoint.tmp`);

    const r = await adminCli(['import', '--chunk-records', '1', file], env);
    expect(r.code, r.err).toBe(1); // one record rejected
    expect(r.out).toMatch(/accepted 2, rejected 1/);
    expect(readFileSync(rejectedTarget, 'utf8')).toBe('precious A\n');
    expect(readFileSync(tempTarget, 'utf8')).toBe('precious B\n');
    // The rejected lines went to a file of import's own, in place of the link.
    expect(lstatSync(`${file}.rejected.ndjson`).isFile()).toBe(true);
    expect(readFileSync(`${file}.rejected.ndjson`, 'utf8')).toMatch(/"line":2/);
    // No temporary file of import's is left behind.
    expect(
      readdirSync(dir).filter(
        (n) => n.startsWith('a.ndjson.import-checkpoint.') && n !== 'a.ndjson.import-checkpoint.tmp',
      ),
    ).toEqual([]);
  }, 120_000);

  it('a planted checkpoint does not truncate what the rejected file links to', async () => {
    const file = join(dir, 'b.ndjson');
    const content = records('b');
    writeFileSync(file, content);
    const target = victim('precious-c.txt', 'precious C, a long file the checkpoint would cut\n');
    symlinkSync(target, `${file}.rejected.ndjson`);
    // A checkpoint made to match the file (its size and the SHA-256 of its head), asking to keep 3 bytes.
    writeFileSync(
      `${file}.import-checkpoint`,
      JSON.stringify({
        format: 'ndjson',
        fingerprint: {
          size: Buffer.byteLength(content),
          head: createHash('sha256').update(content).digest('hex'),
        },
        offset: 0,
        line: 0,
        accepted: 0,
        rejected: 0,
        rejectedBytes: 3,
      }),
    );
    const r = await adminCli(['import', '--resume', file], env);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/b\.ndjson\.rejected\.ndjson is not a regular file \(a symbolic link\?\): refused/);
    expect(readFileSync(target, 'utf8')).toBe('precious C, a long file the checkpoint would cut\n');
  }, 120_000);

  it('a checkpoint that is a link is refused for --resume', async () => {
    const file = join(dir, 'c.ndjson');
    writeFileSync(file, records('c'));
    symlinkSync(victim('elsewhere.json', '{}'), `${file}.import-checkpoint`);
    const r = await adminCli(['import', '--resume', file], env);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /c\.ndjson\.import-checkpoint is not a regular file \(a symbolic link\?\): refused/,
    );
  }, 120_000);
});
