// Modes: server only — the cluster DDL parsed by the real ClickHouse 26.x server of the run (the embedded engine's parser is cluster-migrations')
import { describe, expect, it } from 'vitest';
import { forCluster } from '../../shared/clickhouse/migrate.js';
import { MIGRATIONS } from '../../shared/clickhouse/migrations.js';

/**
 * docs/deployment.md "Cluster mode": what can run here of a cluster. A replicated cluster cannot be
 * built from the engine library (no interserver listener, no DDL worker), so every statement mailstats
 * sends to a cluster — the migrations as `forCluster` rewrites them (ON CLUSTER, Replicated engines,
 * replicated dedup windows), the view reattach after MODIFY QUERY, the migration lock — is given to the
 * real server's parser with EXPLAIN AST, and the tree is checked to say what the statement says.
 */
const url = process.env.CLICKHOUSE_URL;
const CLUSTER = 'prod';

async function explainAst(statement: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/`, { method: 'POST', body: `EXPLAIN AST ${statement}` });
  return { status: res.status, text: await res.text() };
}

const statements = [
  ...MIGRATIONS.flatMap((m) =>
    m.statements.map((s, i) => ({ name: `migration ${m.version} #${i + 1}`, sql: forCluster(s, CLUSTER) })),
  ),
  // What migrate.ts sends besides the migrations' own statements (see reattachView, withMigrationLock).
  { name: 'view detach', sql: `DETACH TABLE daily_sets_mv ON CLUSTER '${CLUSTER}'` },
  { name: 'view attach', sql: `ATTACH TABLE IF NOT EXISTS daily_sets_mv ON CLUSTER '${CLUSTER}'` },
  {
    name: 'lock create',
    sql: `CREATE TABLE schema_migrations_lock ON CLUSTER '${CLUSTER}' (owner String) ENGINE = Memory COMMENT '{"owner":"x","expires":1}'`,
  },
  {
    name: 'lock rename',
    sql: `RENAME TABLE schema_migrations_lock TO schema_migrations_lock_expired_0 ON CLUSTER '${CLUSTER}'`,
  },
  { name: 'lock drop', sql: `DROP TABLE IF EXISTS schema_migrations_lock ON CLUSTER '${CLUSTER}' SYNC` },
];

describe('the cluster DDL, parsed by a real ClickHouse server', () => {
  it('runs against a server (the server project sets CLICKHOUSE_URL)', () => {
    expect(url).toMatch(/^http:\/\//);
  });

  it('refuses a malformed statement (the check can fail)', async () => {
    const { status, text } = await explainAst(
      `CREATE TABLE t ON CLUSTER '${CLUSTER}' (a UInt8) ENGINE = ReplicatedMergeTree(`,
    );
    expect(status).toBe(400);
    expect(text).toMatch(/Syntax error/);
  });

  it.each(statements)('$name: accepted, with its cluster and engine in the tree', async ({ sql }) => {
    const { status, text } = await explainAst(sql);
    expect({ status, text: status === 200 ? '' : text }).toEqual({ status: 200, text: '' });
    // The cluster clause is kept in the parsed query (ASTQueryWithOnCluster), shown by formatting it back.
    if (/\bON CLUSTER\b/.test(sql)) {
      const formatted = await fetch(`${url}/`, {
        method: 'POST',
        body: `SELECT formatQuerySingleLine(${quote(sql)})`,
      });
      expect(await formatted.text()).toContain(`ON CLUSTER ${CLUSTER}`);
    }
    const engine = /ENGINE = (Replicated\w*MergeTree)\(/.exec(sql)?.[1];
    if (engine) expect(text).toContain(`Function ${engine}`);
  });
});

/** A ClickHouse string literal. */
function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
