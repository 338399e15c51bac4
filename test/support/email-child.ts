// Child process for the email crash test: one email worker over the test's database and a private nats-server,
// with a short claim (its lease passes half a second after it claims), until it is killed.
import { openNatsBus } from '../../src/bus/nats';
import { openPostgres } from '../../src/db';
import { createSmtpTransport } from '../../src/email/transport';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { silentLogger } from '../../src/logger';
import { startEmailWorkers } from '../../src/workers/email';

const SEND_LIMIT_MS = 60_000;
const LEASE_MS = 500;

const d = await openPostgres(process.env.TEST_DB_URL!);
const store = await openPostgresEventStore(d.db);
// the configured ack wait (30 s, renewed while a message is handled): a redelivery meanwhile would claim the lapsed lease
// and send a second copy beside the first
const bus = await openNatsBus(process.env.TEST_NATS_URL!, silentLogger());
await startEmailWorkers({
  store,
  bus,
  logger: silentLogger(),
  transport: createSmtpTransport(process.env.TEST_SMTP_URL!),
  from: process.env.TEST_MAIL_FROM!,
  // a send limit no loaded host reaches (at 500 ms the send timed out under load and was deferred 30 s), with the claim
  // still lapsing half a second after it is taken: the SMTP server kills this worker mid-send, and the test starts
  // the instance that takes over only once it has exited
  sendTimeoutMs: SEND_LIMIT_MS,
  leaseMarginMs: LEASE_MS - SEND_LIMIT_MS,
});
process.stdout.write('started\n');
