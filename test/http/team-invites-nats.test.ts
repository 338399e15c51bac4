import { expect, it } from 'vitest';
import { useTwoInstancesOverNats } from '../support/nats-instances';
import { call, type TestServer } from '../support/server';
import { startSmtp, type TestSmtp } from '../support/smtp';
import { useStarted } from '../support/started';
import { onPostgresServer } from '../support/suites';

// Two instances over one database and a private nats-server: needs a real Postgres server.
const suite = onPostgresServer('invitation emails over NATS', 'two instances need a shared server');

suite('invitation emails over NATS JetStream, two instances', () => {
  let smtp: TestSmtp;
  let a: TestServer;
  let b: TestServer;
  useStarted(startSmtp, (x) => (smtp = x));
  useTwoInstancesOverNats(
    () => ({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'aivis <no-reply@aivis.test>', PUBLIC_BASE_URL: 'https://app.aivis.test' } }),
    (ctx) => ({ a, b } = ctx),
  );

  it('given email invites made on both instances, then each person gets exactly one email, and its token is accepted on the other instance', async () => {
    const org = await a.org('Nats Org');
    const sites: string[] = [];
    for (const name of ['N1', 'N2', 'N3'])
      sites.push((await call(a, 'POST', '/api/v1/websites', { key: org.key, body: { name, url: `https://${name}.example.com` } })).body.website.id);
    const emails = Array.from({ length: 6 }, (_, i) => `nats-${i}-${Date.now()}@example.com`);
    const answers = await Promise.all(
      emails.map((email, i) =>
        call(i % 2 ? a : b, 'POST', '/api/v1/invites/bulk', { key: org.key, body: { invite_method: 'email', email, website_ids: sites } }),
      ),
    );
    for (const r of answers) expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const email of emails) await smtp.waitFor(email, 1, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    for (const email of emails) expect(smtp.to(email), email).toHaveLength(1);
    const token = /token=([A-Za-z0-9_-]+)/.exec(smtp.to(emails[0])[0].mail.text ?? '')![1];
    const accepted = await call(b, 'POST', '/api/v1/invites/accept', { body: { token, password: 'correct horse battery' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.memberships).toHaveLength(3);
  });
});
