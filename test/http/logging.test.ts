import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../../commands/organizations/create-organization';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { openRuntime, type Runtime } from '../../src/runtime';
import { freshDatabase } from '../support/db';
import { call } from '../support/server';

describe('request logging', () => {
  const lines: string[] = [];
  let rt: Runtime;
  let url = '';
  let key = '';
  let closeApp: () => Promise<void>;
  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n')), cb()) });
    const logger = pino({ level: 'info', redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' } }, sink);
    const database = await freshDatabase();
    rt = await openRuntime({ ...loadConfig({ LOG_LEVEL: 'info' }), embedded: database.kind === 'pglite' }, logger, { database, withoutBus: true });
    await rt.startProjections();
    const app = await buildApp(rt);
    closeApp = app.close;
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const a = app.app.server.address();
    url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    const r = await createOrganization(rt.store, { name: 'Log', plan: 'enterprise', features: [], pitch_allowance: 0 });
    if ('kind' in r) throw new Error(r.message);
    expect(await rt.waitForReadModels(r.position, 'all', 60_000)).toBe(true);
    key = r.result.api_key;
  });
  afterAll(async () => {
    await closeApp?.();
    await rt?.close();
  });

  it('given requests with keys, then each request logs exactly one line and no line holds a key', async () => {
    lines.length = 0;
    await call({ url }, 'GET', '/api/v1/websites', { key });
    await call({ url }, 'GET', '/api/v1/websites', { headers: { 'x-api-key': `${key}x` } });
    const created = await call({ url }, 'POST', '/api/v1/api-keys', { key, body: { name: 'secret holder' } });
    await new Promise((r) => setTimeout(r, 50));
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests.map((r) => [r.method, r.url, r.status])).toEqual([
      ['GET', '/api/v1/websites', 200],
      ['GET', '/api/v1/websites', 401],
      ['POST', '/api/v1/api-keys', 201],
    ]);
    const all = lines.join('\n');
    expect(all).not.toContain(key);
    expect(all).not.toContain(created.body.key);
  });
});

describe('engines at start', () => {
  it('given live mode with no provider keys, then every model is reported at start and on /readyz, not silently simulated', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n')), cb()) });
    const database = await freshDatabase();
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/_API_KEY$/.test(k)));
    const saved = process.env;
    process.env = env;
    let rt: Runtime | null = null;
    try {
      rt = await openRuntime({ ...loadConfig({ ENGINE_MODE: 'live' }), embedded: database.kind === 'pglite' }, pino({ level: 'warn' }, sink), {
        database,
        withoutBus: true,
      });
    } finally {
      process.env = saved;
    }
    try {
      const warned = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
      expect(JSON.stringify(warned)).toContain('chatgpt');
      const app = await buildApp(rt);
      await app.app.listen({ host: '127.0.0.1', port: 0 });
      const a = app.app.server.address();
      const ready = await call({ url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}` }, 'GET', '/readyz');
      expect(ready.body.engines.mode).toBe('live');
      expect(ready.body.engines.not_configured.map((e: { model: string }) => e.model)).toContain('chatgpt');
      await app.close();
    } finally {
      await rt.close();
    }
  });
});
