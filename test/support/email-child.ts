// Child process for the email crash test: one email worker over the test's database and a private nats-server,
// with a short claim (its lease passes half a second after it claims), until it is killed.
import { openNatsBus } from '../../src/bus/nats';
import { openPostgres } from '../../src/db';
import { createSmtpTransport } from '../../src/email/transport';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { silentLogger } from '../../src/logger';
import { startEmailWorkers } from '../../src/workers/email';

const d = await openPostgres(process.env.TEST_DB_URL!);
const store = await openPostgresEventStore(d.db);
const bus = await openNatsBus(process.env.TEST_NATS_URL!, silentLogger(), { ackWaitMs: 2000 });
await startEmailWorkers({
  store,
  bus,
  logger: silentLogger(),
  transport: createSmtpTransport(process.env.TEST_SMTP_URL!),
  from: process.env.TEST_MAIL_FROM!,
  sendTimeoutMs: 500,
  leaseMarginMs: 0,
});
process.stdout.write('started\n');
