import { describe, expect, it } from 'vitest';
import { refusedWithoutWrite } from '../support/http';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const P = '/api/v1/webhooks';
const ok = { url: 'https://hooks.example.com/aivis', event_types: ['topic.created'] };

describe('webhook input (WEBHOOK_ALLOW_PRIVATE unset)', () => {
  it('given bad input, then 400 naming the field and nothing written', async () => {
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: P, body: { ...ok, url: 'http://hooks.example.com/x' }, status: 400, error: 'url: must be an https URL' },
      { method: 'POST', path: P, body: { ...ok, url: 'https://127.0.0.1/x' }, status: 400, error: 'url: must be a public address' },
      { method: 'POST', path: P, body: { ...ok, url: 'https://10.1.2.3/x' }, status: 400, error: 'url: must be a public address' },
      { method: 'POST', path: P, body: { ...ok, url: 'https://[::1]/x' }, status: 400, error: 'url: must be a public address' },
      { method: 'POST', path: P, body: { ...ok, url: 'https://localhost/x' }, status: 400, error: 'url: must be a public address' },
      { method: 'POST', path: P, body: { ...ok, url: 'https://u:p@hooks.example.com/x' }, status: 400, error: 'url: must not contain credentials' },
      { method: 'POST', path: P, body: { ...ok, url: 'not a url' }, status: 400, error: 'url: must be an absolute URL' },
      { method: 'POST', path: P, body: { ...ok, event_types: [] }, status: 400, error: /^event_types: / },
      {
        method: 'POST',
        path: P,
        body: { ...ok, event_types: ['topic.exploded'] },
        status: 400,
        error: 'event_types: unknown event type "topic.exploded"',
      },
      {
        method: 'POST',
        path: P,
        body: { ...ok, website_ids: [w.b.b1] },
        status: 400,
        error: `website_ids: ${w.b.b1} is not a website of this organization`,
      },
      { method: 'POST', path: P, body: { ...ok, format: 'teams' }, status: 400, error: /^format: / },
      { method: 'POST', path: P, body: { ...ok, extra: 1 }, status: 400 },
    ]);
  });

  it('given a public https URL, then it is created; a PATCH to a private one is 400 and changes nothing', async () => {
    const r = await call(s, 'POST', P, { key: w.a.key, body: ok });
    expect(r.status).toBe(201);
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'PATCH',
        path: `${P}/${r.body.webhook.id}`,
        body: { url: 'https://192.168.1.1/x' },
        status: 400,
        error: 'url: must be a public address',
      },
      { method: 'PATCH', path: `${P}/${r.body.webhook.id}`, body: { event_types: ['*', 'topic.created'] }, status: 400 },
    ]);
    // a disabled endpoint gets no test event: 409 and nothing written
    expect((await call(s, 'PATCH', `${P}/${r.body.webhook.id}`, { key: w.a.key, body: { status: 'disabled' } })).status).toBe(200);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: `${P}/${r.body.webhook.id}/test`, status: 409, error: 'Webhook is disabled: enable it to send a test event' },
    ]);
    expect((await call(s, 'PATCH', `${P}/${r.body.webhook.id}`, { key: w.a.key, body: { status: 'enabled' } })).status).toBe(200);
    const other = await call(s, 'PATCH', `${P}/${r.body.webhook.id}`, { key: w.b.key, body: { status: 'disabled' } });
    expect(other.status).toBe(404);
    expect((await call(s, 'GET', `${P}/${r.body.webhook.id}`, { key: w.a.key })).body.webhook.status).toBe('enabled');
  });
});
