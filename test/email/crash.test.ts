import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { emailStream } from '../../commands/email/email';
import { requestEmail } from '../../commands/email/request-email';
import { openNatsBus } from '../../src/bus/nats';
import { toBusMessage } from '../../src/bus/relay';
import { loadConfig } from '../../src/config';
import { openPostgres } from '../../src/db';
import { isDomainError } from '../../src/domain/errors';
import { decodeEvent } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { silentLogger } from '../../src/logger';
import { openRuntime } from '../../src/runtime';
import { startNatsServer } from '../bus/nats-server';
import { freshDatabase } from '../support/db';
import { startSmtp } from '../support/smtp';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';
import { nodeArgs } from '../support/bundles';

// Killing a worker process needs a database two processes share: the real server (and a private nats-server).
const crash = onPostgresServer('email crash test', 'needs a server two processes share');

const FROM = 'aivis <no-reply@aivis.test>';

crash('an email worker killed between send and mark (kill -9)', () => {
  it('given the SMTP server took the message and the worker process died before it heard so, when another instance takes over, then the message goes again with the same Message-ID and bytes, marked as a possible duplicate', async () => {
    const nats = await startNatsServer();
    const database = await freshDatabase();
    const store = await openPostgresEventStore(database.db);
    let child: ChildProcess | null = null;
    // the first copy: the worker is killed once the server has the whole message, before the server answers 250
    const smtp = await startSmtp({
      onData: async (n) => {
        if (n === 1 && child) {
          const exited = new Promise((r) => child!.once('exit', r));
          child.kill('SIGKILL');
          await exited;
        }
        return null;
      },
    });
    const rt: { close(): Promise<void> }[] = [];
    try {
      child = spawn(process.execPath, nodeArgs('test/support/email-child.ts'), {
        env: { ...process.env, TEST_DB_URL: database.url!, TEST_NATS_URL: nats.url, TEST_SMTP_URL: smtp.url, TEST_MAIL_FROM: FROM },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise((r) => child!.once('exit', r));
      await new Promise<void>((resolve, reject) => {
        child!.stdout!.on('data', (b: Buffer) => b.toString().includes('started') && resolve());
        child!.once('exit', (code) => reject(new Error(`the worker process exited with ${code} before it started`)));
      });

      const to = 'invitee@example.com';
      const ctx = { store, organizationId: newId(), actor: { kind: 'system' as const, user_id: null, api_key_id: null } };
      const r = await requestEmail(ctx, {
        template: 'invitation',
        to,
        params: {
          inviter: null,
          organization: 'Zentro Inc',
          accept_url: 'https://app.aivis.test/invites/accept?token=tok_1',
          expires_at: '2026-03-15T09:30:00Z',
        },
      });
      if (isDomainError(r)) throw new Error(r.message);
      const emailId = r.result.email_id;
      // hand the request to the bus as the relay does
      const bus = await openNatsBus(nats.url, silentLogger());
      const [e] = await store.readStream(emailStream(emailId));
      await bus.publish([toBusMessage({ ...e, ...decodeEvent(e.id, e.type, e.data) })]);
      await bus.close();

      await smtp.waitFor(to, 1);
      await exited;
      expect((await store.readStream(emailStream(emailId))).map((x) => x.type)).toEqual(['EmailRequested', 'EmailSending']);

      // another instance: the whole runtime, whose sweeper finds the claim's lease passed
      const config = loadConfig({
        DATABASE_URL: database.url!,
        NATS_URL: nats.url,
        SMTP_URL: smtp.url,
        MAIL_FROM: FROM,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'aivis-')),
        LOG_LEVEL: 'silent',
        SCHEDULER: 'off',
      });
      const b = await openRuntime(config, silentLogger(), {
        database: await openPostgres(database.url!),
        email: { sweepEveryMs: 200, sweepMinAgeMs: 0 },
      });
      rt.push(b);
      await b.startProjections();
      await b.startWorkers();
      const events = await until('the email sent again', async () => {
        const all = await store.readStream(emailStream(emailId));
        return all.at(-1)?.type === 'EmailSent' && all;
      });
      expect(events.map((x) => x.type)).toEqual(['EmailRequested', 'EmailSending', 'EmailSending', 'EmailSent']);
      expect(events[3].data).toMatchObject({ attempt: 2, possible_duplicate: true, message_id: `<${emailId}@aivis.test>` });
      const copies = smtp.to(to);
      expect(copies).toHaveLength(2);
      expect(copies.map((c) => c.mail.messageId)).toEqual([`<${emailId}@aivis.test>`, `<${emailId}@aivis.test>`]);
      expect(copies[1].raw.equals(copies[0].raw)).toBe(true);
    } finally {
      child?.kill('SIGKILL');
      for (const x of rt) await x.close();
      await store.close();
      await smtp.close();
      await database.close();
      await nats.dispose();
    }
  }, 90_000);
});
