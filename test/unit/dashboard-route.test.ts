import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardRouter } from '../../query-api/dashboard-route.js';

/** /dashboard serves the built page with its headers, and says how to build it when it is missing. */
let server: Server;
let base: string;
const dist = mkdtempSync(join(tmpdir(), 'dashboard-dist-'));

beforeAll(async () => {
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(dist, 'assets', 'index-abc.js'), 'console.log(1)');
  const app = express();
  app.use('/dashboard', dashboardRouter(dist));
  app.use('/unbuilt', dashboardRouter(null));
  server = await new Promise<Server>((ok) => {
    const s = app.listen(0, '127.0.0.1', () => ok(s));
  });
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
  rmSync(dist, { recursive: true, force: true });
});

describe('dashboard route', () => {
  it('serves the page (always revalidated) and hashed assets (cached) under a same-origin-only policy', async () => {
    const page = await fetch(`${base}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const asset = await fetch(`${base}/dashboard/assets/index-abc.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });

  it('answers 503 naming the build command when the page was not built', async () => {
    const res = await fetch(`${base}/unbuilt/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
  });
});
