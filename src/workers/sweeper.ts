import type { Knex } from 'knex';
import { runStream } from '../../commands/responses/start-run';
import type { Bus, BusMessage } from '../bus/port';
import { SYSTEM_ACTOR } from '../domain/events';
import type { Logger } from '../logger';
import { RESPONSE_WORKER } from './responses';
import { sweepEvery } from './every';

export interface SweeperDeps {
  db: Knex;
  bus: Bus;
  logger: Logger;
  /** a unit must have waited this long before it counts as lost (default 60 s) */
  minAgeMs?: number;
  /** how many units one pass sends again (default 1000) */
  limit?: number;
}

export async function migrateSweeper(db: Knex): Promise<void> {
  await db.raw(`create table if not exists aivis_redispatches (request_id uuid primary key, at timestamptz not null, count int not null)`);
}

/**
 * Units of work that were requested but never answered, while the response workers' queue is empty, were lost on
 * the way (an in-process bus that restarted, a message given up after its deliveries): this sends them again. The
 * outcome's id derives from the unit, so a unit sent twice is still recorded once. Instances claim units with a
 * conditional upsert, so two sweepers do not send the same unit in the same period.
 */
export async function sweepLostUnits(deps: SweeperDeps): Promise<number> {
  if ((await deps.bus.backlog(RESPONSE_WORKER)) > 0) return 0;
  const age = `${Math.max(0, Math.round((deps.minAgeMs ?? 60_000) / 1000))} seconds`;
  const claimed = await deps.db.raw(
    `with due as (
       select u.request_id from rm_run_units u
         left join aivis_redispatches d on d.request_id = u.request_id
        where u.status = 'pending' and u.requested_at < now() - ?::interval and (d.at is null or d.at < now() - ?::interval)
        order by u.requested_at limit ?
     ), claimed as (
       insert into aivis_redispatches (request_id, at, count) select request_id, now(), 1 from due
       on conflict (request_id) do update set at = now(), count = aivis_redispatches.count + 1 where aivis_redispatches.at < now() - ?::interval
       returning request_id, count
     )
     select u.*, c.count from claimed c join rm_run_units u on u.request_id = c.request_id`,
    [age, age, deps.limit ?? 1000, age],
  );
  const rows = claimed.rows as Array<Record<string, any>>;
  if (!rows.length) return 0;
  const messages: BusMessage[] = rows.map((u) => ({
    id: `${u.request_id}.again.${u.count}`,
    type: 'ResponseRequested',
    data: {
      request_id: u.request_id,
      run_id: u.run_id,
      website_id: u.website_id,
      prompt_id: u.prompt_id,
      model: u.model,
      location_id: u.location_id,
      persona_id: u.persona_id,
      schedule_id: u.schedule_id,
      day: typeof u.day === 'string' ? u.day.slice(0, 10) : new Date(u.day).toISOString().slice(0, 10),
      run_at: u.run_at ? new Date(u.run_at).toISOString() : null,
    },
    metadata: {
      organization_id: u.organization_id,
      website_id: u.website_id,
      actor: SYSTEM_ACTOR,
      correlation_id: u.run_id,
      causation_id: u.request_id,
      time: new Date().toISOString(),
    },
    streamId: runStream(u.run_id),
    position: '0:0',
  }));
  await deps.bus.publish(messages);
  deps.logger.warn({ units: messages.length }, 'units of work lost on the way sent again');
  return messages.length;
}

export function startSweeper(deps: SweeperDeps & { everyMs?: number }): { stop(): Promise<void> } {
  return sweepEvery(deps.everyMs ?? 30_000, deps.logger, 'sweep of lost units failed', () => sweepLostUnits(deps));
}
