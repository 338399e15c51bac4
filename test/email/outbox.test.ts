import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailStream } from '../../commands/email/email';
import { requestEmail } from '../../commands/email/request-email';
import type { CommandContext } from '../../commands/handle';
import { getEmail } from '../../queries/email/emails';
import { createMemoryBus } from '../../src/bus/memory';
import { loadConfig } from '../../src/config';
import { isDomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { createFileTransport, createSmtpTransport, type MailTransport } from '../../src/email/transport';
import type { EventStore } from '../../src/eventstore/port';
import { openRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime';
import { deliverEmail, type EmailWorkerDeps, startEmailWorkers, sweepEmails } from '../../src/workers/email';
import { freshDatabase } from '../support/db';
import { startSmtp, type TestSmtp } from '../support/smtp';
import { until } from '../support/until';

// Each runtime gets its own database (slow to make on PGlite): the tests of a block share one and use their own
// recipients and emails.

const FROM = 'aivis <no-reply@aivis.test>';
const TOKEN = 'tok_9f8e7d6c5b4a3210SECRET';
const silent = pino({ level: 'silent' });
let recipients = 0;
const recipient = () => `invitee-${++recipients}@example.com`;

const invitation = (to: string, key?: string) => ({
  template: 'invitation' as const,
  to,
  key,
  params: {
    inviter: 'Ada Admin',
    organization: 'Zentro Inc',
    accept_url: `https://app.aivis.test/invites/accept?token=${TOKEN}`,
    expires_at: '2026-03-15T09:30:00Z',
  },
});

interface Outbox {
  rt: Runtime;
  ctx: CommandContext;
  dataDir: string;
  /** every line the runtime logged, at every level */
  logs: string[];
}

/** A runtime over a fresh database: projections, relay, in-process bus and, unless `workers` is false, its workers. */
async function startOutbox(env: Record<string, string>, email: RuntimeOptions['email'] = {}, workers = true): Promise<Outbox> {
  const dataDir = mkdtempSync(join(tmpdir(), 'aivis-outbox-'));
  const database = await freshDatabase(10, { serverSchema: true });
  const logs: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) });
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCHEDULER: 'off', MAIL_FROM: FROM, ...env });
  const rt = await openRuntime({ ...config, embedded: database.kind === 'pglite', natsUrl: null }, logger, {
    database,
    withoutBus: true,
    email: { backoffMs: [50, 100, 200], sweepEveryMs: 3_600_000, ...email },
  });
  await rt.startProjections();
  if (workers) await rt.startWorkers();
  const ctx: CommandContext = { store: rt.store, organizationId: newId(), actor: { kind: 'api_key', user_id: null, api_key_id: newId() } };
  return { rt, ctx, dataDir, logs };
}

async function request(ctx: CommandContext, r: ReturnType<typeof invitation>): Promise<string> {
  const res = await requestEmail(ctx, r);
  if (isDomainError(res)) throw new Error(res.message);
  return res.result.email_id;
}

const eventsOf = async (store: EventStore, emailId: string) =>
  (await store.readStream(emailStream(emailId))).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
const typesOf = async (store: EventStore, emailId: string) => (await eventsOf(store, emailId)).map((e) => e.type);

const settled = (store: EventStore, emailId: string) =>
  until(`email ${emailId} settled`, async () => {
    const events = await eventsOf(store, emailId);
    return ['EmailSent', 'EmailFailed'].includes(events.at(-1)?.type ?? '') && events;
  });

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An invitation to a new recipient, requested through `o` and settled (sent or failed): its address, id and events. */
async function invitedAndSettled(o: Outbox) {
  const to = recipient();
  const emailId = await request(o.ctx, invitation(to));
  return { to, emailId, events: await settled(o.rt.store, emailId) };
}

/** Two deferrals, then the third attempt: what comes before its outcome. */
const THREE_ATTEMPTS = ['EmailRequested', 'EmailSending', 'EmailDeferred', 'EmailSending', 'EmailDeferred', 'EmailSending'];

describe('the email outbox over SMTP (SMTP_URL set)', () => {
  let smtp: TestSmtp;
  let o: Outbox;
  beforeAll(async () => {
    smtp = await startSmtp();
    o = await startOutbox({ SMTP_URL: smtp.url }, { maxAttempts: 3 });
  });
  afterAll(async () => {
    await o?.rt.close();
    await smtp?.close();
  });

  it('given an invitation requested, when the worker sends it, then the SMTP server gets it once with the recipient, subject and acceptance link', async () => {
    smtp.policy = {};
    const to = recipient();
    const emailId = await request(o.ctx, invitation(to));

    const [got] = await smtp.waitFor(to, 1);
    const events = await settled(o.rt.store, emailId);
    expect(got.envelope).toEqual({ from: 'no-reply@aivis.test', to: [to] });
    expect(got.mail.to).toMatchObject({ value: [{ address: to }] });
    expect(got.mail.from).toMatchObject({ value: [{ address: 'no-reply@aivis.test', name: 'aivis' }] });
    expect(got.mail.subject).toBe('Ada Admin invited you to Zentro Inc on aivis');
    expect(got.mail.messageId).toBe(`<${emailId}@aivis.test>`);
    expect(got.mail.date?.getTime()).toBe(Math.floor(Date.parse(events[0].data.requested_at as string) / 1000) * 1000);
    expect(got.mail.headers.get('auto-submitted')).toBe('auto-generated');
    const link = `https://app.aivis.test/invites/accept?token=${TOKEN}`;
    expect(got.mail.text).toContain(link);
    expect(got.mail.text).toContain('15 March 2026 at 09:30 UTC');
    expect(got.mail.html).toContain(`href="${link}"`);

    expect(events.map((e) => e.type)).toEqual(['EmailRequested', 'EmailSending', 'EmailSent']);
    expect(events[0].data).toMatchObject({ email_id: emailId, template: 'invitation', to });
    expect(events[1].data).toMatchObject({ email_id: emailId, attempt: 1, message_id: `<${emailId}@aivis.test>` });
    expect(events[2].data).toMatchObject({
      email_id: emailId,
      attempt: 1,
      message_id: `<${emailId}@aivis.test>`,
      transport: 'smtp',
      possible_duplicate: false,
    });
    expect(String(events[2].data.response)).toMatch(/^250 /);
    const view = await until('the read model', async () => {
      const v = await getEmail(o.rt.database.db, o.ctx.organizationId, emailId);
      return v?.status === 'sent' && v;
    });
    expect(view).toMatchObject({
      email_id: emailId,
      template: 'invitation',
      status: 'sent',
      attempts: 1,
      possible_duplicate: false,
      last_error: null,
    });
    expect(JSON.stringify(view)).not.toContain(to);
    expect(await getEmail(o.rt.database.db, newId(), emailId)).toBeNull();
    await pause(200);
    expect(smtp.to(to)).toHaveLength(1);
  });

  it('given emails sent, when the logs are read, then they name each email but never its recipient, token, content or the SMTP password', async () => {
    smtp.policy = {};
    const to = recipient();
    const emailId = await request(o.ctx, invitation(to));
    await settled(o.rt.store, emailId);
    const all = o.logs.join('');
    expect(all).toContain(emailId);
    expect(all).toContain('email sent');
    for (const secret of [to, TOKEN, 'Ada Admin', 'Zentro Inc', 'p@ss:word/1', encodeURIComponent('p@ss:word/1')]) expect(all).not.toContain(secret);
  });

  it('given a server that refuses twice for now (451), when it then accepts, then the email is delivered once after two deferrals', async () => {
    smtp.policy = { onData: (n) => (n <= 2 ? { code: 451, message: '4.3.0 Try again later' } : null) };
    const { to, events } = await invitedAndSettled(o);
    expect(events.map((e) => e.type)).toEqual([...THREE_ATTEMPTS, 'EmailSent']);
    expect(events[2].data).toMatchObject({ attempt: 1, ambiguous: false });
    expect(String(events[2].data.reason)).toContain('451 4.3.0 Try again later');
    expect(events[6].data).toMatchObject({ attempt: 3, possible_duplicate: false });
    expect(smtp.dataCount(to)).toBe(3);
    await pause(300);
    expect(smtp.to(to)).toHaveLength(1);
  });

  it('given a server that refuses for now every time, when the attempts run out, then the email is recorded as failed with the reason', async () => {
    smtp.policy = { onData: () => ({ code: 452, message: '4.2.2 Mailbox full' }) };
    const { to, emailId, events } = await invitedAndSettled(o);
    expect(events.map((e) => e.type)).toEqual([...THREE_ATTEMPTS, 'EmailFailed']);
    expect(events.at(-1)!.data).toMatchObject({ email_id: emailId, attempts: 3, permanent: false });
    expect(String(events.at(-1)!.data.reason)).toMatch(/^3 attempts, the last: .*452 4\.2\.2 Mailbox full/);
    expect(smtp.to(to)).toHaveLength(0);
    const view = await until('the read model', async () => {
      const v = await getEmail(o.rt.database.db, o.ctx.organizationId, emailId);
      return v?.status === 'failed' && v;
    });
    expect(view.last_error).toMatch(/452 4\.2\.2 Mailbox full/);
  });

  it('given a recipient the server refuses for good (550), then the email fails at once and the recorded reason does not repeat the address', async () => {
    smtp.policy = { onRecipient: (a) => ({ code: 550, message: `5.1.1 <${a}>: Recipient address rejected` }) };
    const { to, events } = await invitedAndSettled(o);
    expect(events.map((e) => e.type)).toEqual(['EmailRequested', 'EmailSending', 'EmailFailed']);
    expect(events[2].data).toMatchObject({ attempts: 1, permanent: true });
    expect(String(events[2].data.reason)).toContain('550 5.1.1 <address>: Recipient address rejected');
    expect(JSON.stringify(events.slice(1))).not.toContain(to);
    expect(o.logs.join('')).not.toContain(to);
  });
});

describe('the email outbox without SMTP_URL', () => {
  let o: Outbox;
  beforeAll(async () => {
    o = await startOutbox({});
  });
  afterAll(async () => {
    await o?.rt.close();
  });

  it('given no SMTP server, when an invitation is requested, then an RFC 5322 .eml file lands in DATA_DIR/outbox, readable by the server only', async () => {
    const { to, emailId, events } = await invitedAndSettled(o);
    expect(events.at(-1)).toMatchObject({ type: 'EmailSent', data: { transport: 'file', attempt: 1, possible_duplicate: false } });
    const file = join(o.dataDir, 'outbox', `${emailId}.eml`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const mail = await simpleParser(readFileSync(file));
    expect(mail.to).toMatchObject({ value: [{ address: to }] });
    expect(mail.subject).toBe('Ada Admin invited you to Zentro Inc on aivis');
    expect(mail.messageId).toBe(`<${emailId}@aivis.test>`);
    expect(mail.text).toContain(`https://app.aivis.test/invites/accept?token=${TOKEN}`);
    expect(mail.html).toContain(`href="https://app.aivis.test/invites/accept?token=${TOKEN}"`);
  });

  it('given the same key asked for twice at once and once more, then it is one email, requested once and sent once', async () => {
    const to = recipient();
    const [a, b] = await Promise.all([request(o.ctx, invitation(to, 'invite-1')), request(o.ctx, invitation(to, 'invite-1'))]);
    const c = await request(o.ctx, invitation(to, 'invite-1'));
    expect(new Set([a, b, c]).size).toBe(1);
    const events = await settled(o.rt.store, a);
    expect(events.filter((e) => e.type === 'EmailRequested')).toHaveLength(1);
    expect(readdirSync(join(o.dataDir, 'outbox')).filter((f) => f.startsWith(a))).toEqual([`${a}.eml`]);
    expect(await request(o.ctx, invitation(to, 'invite-2'))).not.toBe(a);
    // another organization's key is another email
    expect(await request({ ...o.ctx, organizationId: newId() }, invitation(to, 'invite-1'))).not.toBe(a);
  });
});

/** A store whose process dies when it records an attempt's outcome: that append and every one after it fail. */
function dyingAtMark(store: EventStore): EventStore {
  let alive = true;
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'append') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<EventStore['append']>) => {
        if (alive && args[1].some((e) => ['EmailSent', 'EmailDeferred', 'EmailFailed'].includes(e.type))) alive = false;
        if (!alive) throw new Error('process gone');
        return target.append(...args);
      };
    },
  });
}

describe('one worker at a time, and crashes (the test delivers as a worker would)', () => {
  let smtp: TestSmtp;
  let o: Outbox;
  beforeAll(async () => {
    smtp = await startSmtp();
    o = await startOutbox({}, {}, false);
  });
  afterAll(async () => {
    await o?.rt.close();
    await smtp?.close();
  });

  /** The message the bus carries for an email (what the relay and the sweeper send: the worker reads the rest). */
  const messageFor = (emailId: string) => ({
    id: newId(),
    data: { email_id: emailId },
    metadata: {
      organization_id: o.ctx.organizationId,
      website_id: null,
      actor: o.ctx.actor,
      correlation_id: emailId,
      causation_id: null,
      time: new Date().toISOString(),
    },
  });
  const worker = (transport: MailTransport, over: Partial<EmailWorkerDeps> = {}): EmailWorkerDeps => ({
    store: o.rt.store,
    bus: o.rt.bus,
    logger: silent,
    transport,
    from: FROM,
    ...over,
  });

  it('given one email delivered to two workers at once, then one claims it and sends, the other finds it held', async () => {
    smtp.policy = { onData: () => pause(150).then(() => null) };
    const to = recipient();
    const emailId = await request(o.ctx, invitation(to));
    const transport = createSmtpTransport(smtp.url);
    try {
      const outcomes = await Promise.all([
        deliverEmail(worker(transport), messageFor(emailId)),
        deliverEmail(worker(transport), messageFor(emailId)),
      ]);
      expect(outcomes.sort()).toEqual(['held', 'sent']);
      expect(smtp.to(to)).toHaveLength(1);
      expect(await typesOf(o.rt.store, emailId)).toEqual(['EmailRequested', 'EmailSending', 'EmailSent']);
    } finally {
      transport.close();
    }
  });

  it('given an SMTP attempt that died after the server took the message (a crash between send and mark), when it is taken over after its lease, then the same message goes again, same Message-ID and bytes, recorded as a possible duplicate', async () => {
    smtp.policy = {};
    const to = recipient();
    const emailId = await request(o.ctx, invitation(to));
    const transport = createSmtpTransport(smtp.url);
    try {
      // the lease is the send timeout: 1 s, not less, or a loaded machine times the send out before the server has
      // stored the message (it parses it first), and the attempt dies as not delivered instead
      const w = worker(transport, { sendTimeoutMs: 1_000, leaseMarginMs: 0 });
      await expect(deliverEmail({ ...w, store: dyingAtMark(o.rt.store) }, messageFor(emailId))).rejects.toThrow('process gone');
      expect(smtp.to(to)).toHaveLength(1);
      expect(await typesOf(o.rt.store, emailId)).toEqual(['EmailRequested', 'EmailSending']);

      await pause(1_050);
      expect(await deliverEmail(w, messageFor(emailId))).toBe('sent');
      expect(await deliverEmail(w, messageFor(emailId))).toBe('settled');

      const copies = smtp.to(to);
      expect(copies).toHaveLength(2);
      expect(copies[1].mail.messageId).toBe(`<${emailId}@aivis.test>`);
      expect(copies[1].raw.equals(copies[0].raw)).toBe(true);
      const events = await eventsOf(o.rt.store, emailId);
      expect(events.map((e) => e.type)).toEqual(['EmailRequested', 'EmailSending', 'EmailSending', 'EmailSent']);
      expect(events[3].data).toMatchObject({ attempt: 2, possible_duplicate: true });
    } finally {
      transport.close();
    }
  });

  it('given a file attempt that died after its file was in place (a crash between send and mark), when it is taken over, then nothing is written again and it is not a duplicate', async () => {
    const emailId = await request(o.ctx, invitation(recipient()));
    const dir = mkdtempSync(join(tmpdir(), 'aivis-outbox-'));
    const w = worker(createFileTransport(dir), { sendTimeoutMs: 100, leaseMarginMs: 0 });
    await expect(deliverEmail({ ...w, store: dyingAtMark(o.rt.store) }, messageFor(emailId))).rejects.toThrow('process gone');
    const file = join(dir, `${emailId}.eml`);
    const before = statSync(file);

    await pause(150);
    expect(await deliverEmail(w, messageFor(emailId))).toBe('sent');
    expect(readdirSync(dir)).toEqual([`${emailId}.eml`]);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    const events = await eventsOf(o.rt.store, emailId);
    expect(events.map((e) => e.type)).toEqual(['EmailRequested', 'EmailSending', 'EmailSending', 'EmailSent']);
    expect(events[3].data).toMatchObject({ attempt: 2, possible_duplicate: false, response: 'delivered by an earlier attempt' });
  });

  it('given a file attempt that died before its file was in place, when it is taken over, then the file is written once and it is not a duplicate', async () => {
    const emailId = await request(o.ctx, invitation(recipient()));
    const dir = mkdtempSync(join(tmpdir(), 'aivis-outbox-'));
    const files = createFileTransport(dir);
    const w = worker(files, { sendTimeoutMs: 100, leaseMarginMs: 0 });
    const crashing: MailTransport = { ...files, send: () => Promise.reject(new Error('process gone')) };
    await expect(deliverEmail({ ...w, transport: crashing, store: dyingAtMark(o.rt.store) }, messageFor(emailId))).rejects.toThrow('process gone');
    expect(await typesOf(o.rt.store, emailId)).toEqual(['EmailRequested', 'EmailSending']);
    expect(readdirSync(dir)).toEqual([]);

    await pause(150);
    expect(await deliverEmail(w, messageFor(emailId))).toBe('sent');
    expect(readdirSync(dir)).toEqual([`${emailId}.eml`]);
    expect((await eventsOf(o.rt.store, emailId)).at(-1)!.data).toMatchObject({ attempt: 2, possible_duplicate: false });
  });

  it('given wrong SMTP credentials, when the server refuses the login (535), then the email waits for a fixed configuration (deferred) until its attempts run out', async () => {
    smtp.policy = {};
    const emailId = await request(o.ctx, invitation(recipient()));
    const transport = createSmtpTransport(smtp.url.replace(/:[^:@/]+@/, ':wrong@'));
    try {
      const w = worker(transport, { maxAttempts: 2 });
      expect(await deliverEmail(w, messageFor(emailId))).toBe('deferred');
      expect(await deliverEmail(w, messageFor(emailId))).toBe('failed');
      const events = await eventsOf(o.rt.store, emailId);
      expect(events.map((e) => e.type)).toEqual(['EmailRequested', 'EmailSending', 'EmailDeferred', 'EmailSending', 'EmailFailed']);
      expect(events[2].data).toMatchObject({ ambiguous: false });
      expect(String(events[2].data.reason)).toMatch(/^EAUTH: .*535/);
      expect(events[4].data).toMatchObject({ attempts: 2, permanent: false });
    } finally {
      transport.close();
    }
  });

  it('given a server that cannot be reached, then the attempt is deferred and not counted as possibly delivered', async () => {
    const emailId = await request(o.ctx, invitation(recipient()));
    const transport = createSmtpTransport('smtp://127.0.0.1:1');
    try {
      expect(await deliverEmail(worker(transport), messageFor(emailId))).toBe('deferred');
      expect((await eventsOf(o.rt.store, emailId)).at(-1)!.data).toMatchObject({ attempt: 1, ambiguous: false });
    } finally {
      transport.close();
    }
  });

  it('given an email whose message was lost on the way (no worker ever saw it), when the sweeper runs, then it goes to the workers again and is sent once', async () => {
    const emailId = await request(o.ctx, invitation(recipient()));
    await until('the read model', async () => (await getEmail(o.rt.database.db, o.ctx.organizationId, emailId))?.status === 'requested');
    // a bus the relay never fed, like an in-process bus after a restart
    const bus = createMemoryBus();
    const dir = mkdtempSync(join(tmpdir(), 'aivis-outbox-'));
    const workers = await startEmailWorkers({ ...worker(createFileTransport(dir)), bus });
    try {
      expect(await sweepEmails({ db: o.rt.database.db, bus, logger: silent, minAgeMs: 3_600_000 })).toBe(0);
      expect(await sweepEmails({ db: o.rt.database.db, bus, logger: silent, minAgeMs: 0 })).toBeGreaterThanOrEqual(1);
      await until('sent', async () => (await typesOf(o.rt.store, emailId)).at(-1) === 'EmailSent');
      await until('the read model', async () => (await getEmail(o.rt.database.db, o.ctx.organizationId, emailId))?.status === 'sent');
      expect(readdirSync(dir)).toContain(`${emailId}.eml`);
      expect(await typesOf(o.rt.store, emailId)).toEqual(['EmailRequested', 'EmailSending', 'EmailSent']);
    } finally {
      await workers.stop();
      await bus.close();
    }
  });
});
