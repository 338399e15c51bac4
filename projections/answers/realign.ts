import type { Knex } from 'knex';
import { declareAppendsNone } from '../../src/eventstore/horizon';
import { outOfLine } from '../site-entities';
import { rederive } from './rederive';
import { lockSite, nextVersion } from './writers';

/**
 * Re-derives a website whose facts are out of line with its entity list (outOfLine), outside the projection's
 * batches: it locks the site row as every writer of the website's facts does, checks again under the lock, and
 * derives the whole history from the stored answers with the current list (what the projection itself would write).
 * Returns what was out of line, or null when nothing was (any more).
 */
export async function realignSite(db: Knex, websiteId: string): Promise<string | null> {
  return db.transaction(async (trx) => {
    // long (the website's whole history), and it appends no events
    await declareAppendsNone(trx);
    await lockSite(trx, websiteId);
    const why = await outOfLine(trx, websiteId);
    if (why === null) return null;
    await rederive(trx, websiteId, await nextVersion(trx));
    return why;
  });
}
