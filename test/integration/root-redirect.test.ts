// Modes: embedded only — the dashboard redirect in a browser, independent of the store
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

/** docs/operations.md "Start-up": `/` in a browser leads to the dashboard; an API client keeps the JSON 404. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.stop();
});

describe('GET /', () => {
  it('a browser (Accept: text/html) is redirected to /dashboard/', async () => {
    const res = await fetch(`${svc.url}/`, {
      redirect: 'manual',
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard/');
  });
  it('a JSON client keeps the JSON 404', async () => {
    for (const accept of ['application/json', '*/*']) {
      const res = await fetch(`${svc.url}/`, { redirect: 'manual', headers: { accept } });
      expect(res.status, accept).toBe(404);
      expect(await res.json(), accept).toMatchObject({ err: true, code: 404 });
    }
  });
});
