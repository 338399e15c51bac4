// Child process for the crash test: runs the counting projection until killed.
import { openPostgres } from '../../src/db';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { ProjectionRunner } from '../../src/eventstore/runner';
import { silentLogger } from '../../src/logger';
import { countingProjection } from './counting-projection';

const d = await openPostgres(process.env.TEST_DB_URL!);
const store = await openPostgresEventStore(d.db);
const runner = new ProjectionRunner({ projection: countingProjection({ delayMs: 5 }), store, db: d.db, logger: silentLogger(), batchSize: 50 });
await runner.start();
process.stdout.write('started\n');
