import { emailsProjection } from '../../projections/emails';
import { join } from 'node:path';
import { createFileTransport, createSmtpTransport, type MailTransport } from '../email/transport';
import { EMAIL_WORKER_TYPES, startEmailSweeper, startEmailWorkers } from '../workers/email';
import type { AreaManifest } from './manifest';

/** Outgoing mail: the outbox's senders and the sweeper of requests whose message was lost (src/workers/email.ts). */
export const emails: AreaManifest<'emails'> = {
  readModels: { emails: emailsProjection },
  notInFeed: [
    {
      why: 'delivery of mail: the invitation or change that sent it is the entry',
      types: ['EmailRequested', 'EmailSending', 'EmailSent', 'EmailDeferred', 'EmailFailed'],
    },
  ],
  workers: [
    {
      busTypes: EMAIL_WORKER_TYPES,
      async start({ config, options, db, store, bus, logger, now }) {
        const { sweepEveryMs, sweepMinAgeMs, ...email } = options.email ?? {};
        const transport: MailTransport =
          email.transport ?? (config.smtpUrl ? createSmtpTransport(config.smtpUrl) : createFileTransport(join(config.dataDir, 'outbox')));
        const senders = await startEmailWorkers({ store, bus, logger, now, from: config.mailFrom, ...email, transport });
        const sweeper = startEmailSweeper({ db, bus, logger, everyMs: sweepEveryMs, minAgeMs: sweepMinAgeMs });
        return {
          async stop() {
            await sweeper.stop();
            await senders.stop();
            await transport.close();
          },
        };
      },
    },
  ],
};
