import { hostname } from 'node:os';
import type { Knex } from 'knex';
import { Webhook as Signer } from 'standardwebhooks';
import type { FeedMapping } from '../../projections/activity';
import { load } from '../../commands/handle';
import { signingSecrets, updateWebhook, Webhook, webhookStream } from '../../commands/webhooks/webhook';
import type { BusMessage } from '../bus/port';
import { prepared } from '../db';
import { type EventType, isKnownType, SYSTEM_ACTOR } from '../domain/events';
import { newId } from '../domain/ids';
import type { EventStore, TypedEvent } from '../eventstore/port';
import { openedMessage } from '../bus/relay';
import { follower, type Projection } from '../eventstore/projection';
import type { Logger } from '../logger';
import { type SafeFetch, SafeFetchError } from '../net/safe-fetch';

/**
 * Webhook delivery. A follower of the log (one instance at a time) turns each event a webhook may want (every activity
 * entry, `webhook.test`, `alert.fired`) into one delivery row per matching endpoint (unique per endpoint and event, so
 * a batch followed again adds nothing); its checkpoint moves only after that commit, so an instance killed before
 * loses nothing. The fan-out leases the first attempts it has room for to its own instance; every instance's dispatcher
 * claims the other due rows with a lease (`for update skip locked`: one attempt at a time per delivery), posts them
 * signed (Standard Webhooks) through the safe fetcher, and records the outcome fenced by its attempt number; a lease that runs out (its instance died) makes the delivery due again.
 */

export const WEBHOOK_FANOUT = 'webhook-fanout';
/** what the lease of one attempt covers beyond its 10 s timeout */
const LEASE_S = 20;
const TIMEOUT_MS = 10_000;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead';

export async function migrateWebhookDeliveries(db: Knex): Promise<void> {
  await db.raw(`
    create table if not exists webhook_deliveries (
      id uuid primary key,
      webhook_id uuid not null,
      organization_id uuid not null,
      event_id uuid not null,
      event_type text not null,
      payload jsonb not null,
      status text not null default 'pending',
      attempts int not null default 0,
      last_status_code int,
      last_error text,
      created_at timestamptz not null default now(),
      next_attempt_at timestamptz,
      delivered_at timestamptz,
      lease_until timestamptz,
      lease_owner text,
      unique (webhook_id, event_id)
    );
    create index if not exists webhook_deliveries_due_by_hook on webhook_deliveries (webhook_id, next_attempt_at) where status = 'pending';
    create index if not exists webhook_deliveries_list on webhook_deliveries (webhook_id, created_at desc, id);
    -- room on each page: a claim (attempts, lease) rewrites the row in place, without new index entries
    alter table webhook_deliveries set (fillfactor = 70);`);
}

/** What a webhook receives of one event: its type and body's `data`, or null when no webhook wants it. */
export interface Outgoing {
  type: string;
  website_id: string | null;
  data: unknown;
  /** the one endpoint it goes to (a test event), else every matching one */
  only?: string;
}

export type AlertOutgoing = (msg: BusMessage) => Outgoing | null;

/** The event types a webhook is told of: the activity feed's, plus a test event and fired alerts. */
export function outgoing(feed: FeedMapping, msg: BusMessage): Outgoing | null {
  if (msg.type === 'WebhookTested') {
    const id = (msg.data as { webhook_id: string }).webhook_id;
    return { type: 'webhook.test', website_id: null, data: { webhook_id: id, message: 'a test event' }, only: id };
  }
  if (msg.type === 'AlertFired') {
    const d = msg.data as { alert: { website_id: string } };
    return { type: 'alert.fired', website_id: d.alert.website_id, data: d.alert };
  }
  const map = feed[msg.type as EventType] as ((e: TypedEvent) => ReturnType<NonNullable<FeedMapping[EventType]>>) | undefined;
  if (!map) return null;
  const entry = map({ id: msg.id, type: msg.type, data: msg.data, metadata: msg.metadata, streamId: msg.streamId } as unknown as TypedEvent);
  if (!entry) return null;
  const website_id = entry.website_id !== undefined ? entry.website_id : (msg.metadata.website_id ?? null);
  const actor = msg.metadata.actor;
  return {
    type: `${entry.entity_type}.${entry.change_type}`,
    website_id,
    data: {
      id: msg.id,
      website_id,
      entity_type: entry.entity_type,
      change_type: entry.change_type,
      entity_ids: entry.entity_ids,
      via_api_key: actor.kind === 'api_key',
      actor: { kind: actor.kind, user_id: actor.user_id, api_key_id: actor.api_key_id },
      created_at: msg.metadata.time,
    },
  };
}

/** How a fan-out takes the first attempts itself: up to `room` rows, none of a `saturated` endpoint, leased to `owner`. */
export interface FanOutLease {
  owner: string;
  seconds: number;
  room: number;
  saturated: string[];
}

/**
 * One row per enabled endpoint of the organization that wants the event; returns how many were added and, with a
 * lease, the rows whose first attempt is this caller's (written leased: no claim of their own).
 */
export async function fanOut(db: Knex, msg: BusMessage, out: Outgoing, lease?: FanOutLease): Promise<{ added: number; leased: Claimed[] }> {
  return (await fanOutMany(db, [{ msg, out }], lease))[0];
}

/** fanOut of several events in one statement; the lease's room is shared by them in their order. */
export async function fanOutMany(
  db: Knex,
  events: readonly { msg: BusMessage; out: Outgoing }[],
  lease?: FanOutLease,
): Promise<{ added: number; leased: Claimed[] }[]> {
  const payloads = events.map(({ msg, out }) =>
    JSON.stringify({
      id: msg.id,
      type: out.type,
      created_at: msg.metadata.time,
      organization_id: msg.metadata.organization_id,
      website_id: out.website_id,
      data: out.data,
    }),
  );
  // alert.fired also reaches the rule's own webhooks whatever their event types
  const ruleHooks = events.map(({ out }) =>
    JSON.stringify(out.type === 'alert.fired' ? ((out.data as { webhook_ids?: string[] }).webhook_ids ?? []) : []),
  );
  const rows = await prepared<Claimed & { leased: boolean }>(
    db,
    'aivis_webhooks_fan_out',
    `with ev as (
       select * from unnest($1::int[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::jsonb[], $8::jsonb[])
         as e(ord, event_id, organization_id, type, website_id, only_id, rule_hooks, payload)),
     wanted as (
       select e.ord, e.event_id, e.type, e.payload, w.id, w.organization_id, not (w.id = any($9::uuid[])) as free
         from ev e join rm_webhooks w on w.organization_id = e.organization_id
        where w.status = 'enabled'
          and (e.only_id is null or w.id = e.only_id)
          and (jsonb_exists(e.rule_hooks, w.id::text) or w.event_types @> '["*"]' or w.event_types @> jsonb_build_array(e.type))
          and (w.website_ids is null or (e.website_id is not null and w.website_ids @> jsonb_build_array(e.website_id)))),
     picked as (select *, free and row_number() over (partition by free order by ord, id) <= $10 as leased from wanted),
     ins as (
       insert into webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, next_attempt_at, attempts, lease_until, lease_owner)
       select gen_random_uuid(), p.id, p.organization_id, p.event_id, p.type, p.payload, now(),
              case when p.leased then 1 else 0 end,
              case when p.leased then now() + make_interval(secs => $11) end,
              case when p.leased then $12::text end
         from picked p
       on conflict (webhook_id, event_id) do nothing
       returning id, webhook_id, organization_id, event_id, event_type, payload, attempts, lease_owner)
     select ins.id, ins.webhook_id, ins.organization_id, ins.event_id, ins.event_type, ins.attempts, ins.lease_owner is not null as leased,
            case when ins.lease_owner is not null then ins.payload end as payload, w.url, w.format, w.secret_changed_at
       from ins join rm_webhooks w on w.id = ins.webhook_id`,
    [
      events.map((_, i) => i),
      events.map(({ msg }) => msg.id),
      events.map(({ msg }) => msg.metadata.organization_id),
      events.map(({ out }) => out.type),
      events.map(({ out }) => out.website_id),
      events.map(({ out }) => out.only ?? null),
      ruleHooks,
      payloads,
      lease?.saturated ?? [],
      lease?.room ?? 0,
      lease?.seconds ?? 0,
      lease?.owner ?? null,
    ],
  );
  const results = events.map(() => ({ added: 0, leased: [] as Claimed[] }));
  const byEvent = new Map(events.map(({ msg }, i) => [msg.id, results[i]]));
  for (const { leased, ...c } of rows) {
    const to = byEvent.get(c.event_id);
    if (!to) continue;
    to.added++;
    if (leased) to.leased.push(c);
  }
  return results;
}

export interface WebhookWorkerDeps {
  db: Knex;
  store: EventStore;
  logger: Logger;
  /** starts the fan-out as a follower of the log (AreaWorkerDeps.follow) */
  follow(projection: Projection): Promise<{ stop(): Promise<void> }>;
  feed: FeedMapping;
  fetch: SafeFetch;
  /** the waits before each retry, in seconds */
  retryScheduleS: readonly number[];
  /** attempts in flight on this instance (default 128) and per endpoint (default 16) */
  concurrency?: number;
  perEndpoint?: number;
  /** how often the dispatcher looks for due deliveries when nothing woke it (default 500 ms) */
  pollMs?: number;
  /** how long an attempt's lease lasts (default LEASE_S): a dead instance's attempts are due again after it */
  leaseS?: number;
  /** how long an attempt waits for the endpoint's answer (default TIMEOUT_MS: docs/api/webhooks.md) */
  timeoutMs?: number;
}

export interface Claimed {
  id: string;
  webhook_id: string;
  organization_id: string;
  event_id: string;
  event_type: string;
  payload: { created_at: string; data: unknown; type: string; website_id: string | null };
  attempts: number;
  url: string;
  format: 'standard' | 'slack';
  secret_changed_at: Date;
}

/** The Slack format's one line of text. */
function slackText(p: Claimed['payload']): string {
  const d = p.data as Record<string, unknown>;
  if (p.type === 'alert.fired' && typeof d.summary === 'string') return `aivis alert: ${d.summary}`;
  if (p.type === 'webhook.test') return 'aivis: a test event';
  const ids = Array.isArray(d.entity_ids) ? ` (${(d.entity_ids as string[]).slice(0, 5).join(', ')})` : '';
  return `aivis: ${p.type}${ids}${p.website_id ? ` on website ${p.website_id}` : ''}`;
}

/** The delivery workers of this instance: the shared fan-out consumer and this instance's dispatcher. */
export async function startWebhookWorkers(deps: WebhookWorkerDeps): Promise<{ stop(): Promise<void>; poke(): void }> {
  const log = deps.logger.child({ worker: 'webhooks' });
  const owner = `${hostname()}:${process.pid}:${newId().slice(0, 8)}`;
  const concurrency = deps.concurrency ?? 128;
  const perEndpoint = deps.perEndpoint ?? 16;
  const leaseS = deps.leaseS ?? LEASE_S;
  const timeoutMs = deps.timeoutMs ?? TIMEOUT_MS;
  const inFlight = new Map<string, number>();
  let total = 0;
  let running = true;
  let wake: (() => void) | null = null;
  let poked = false;
  const poke = () => {
    poked = true;
    wake?.();
  };
  // the signers of each endpoint (a signer decodes its secret once), read again when the secret changes
  const secrets = new Map<string, { at: number; secrets: Signer[]; until: number }>();

  async function secretsOf(c: Claimed): Promise<Signer[]> {
    const changed = new Date(c.secret_changed_at).getTime();
    const hit = secrets.get(c.webhook_id);
    if (hit && hit.at === changed && hit.until > Date.now()) return hit.secrets;
    const { state } = await load(deps.store, webhookStream(c.webhook_id), Webhook);
    const now = new Date();
    const list = signingSecrets(state, now).map((k) => new Signer(k));
    // the rotated-out secret stops signing at its time: read again then
    const until = state.previous && list.length > 1 ? Date.parse(state.previous.until) : Number.POSITIVE_INFINITY;
    secrets.set(c.webhook_id, { at: changed, secrets: list, until });
    return list;
  }

  async function attempt(c: Claimed): Promise<void> {
    const body = c.format === 'slack' ? JSON.stringify({ text: slackText(c.payload) }) : JSON.stringify(c.payload);
    let code: number | null = null;
    let error: string | null = null;
    try {
      const keys = await secretsOf(c);
      if (keys.length === 0) throw new Error('the endpoint has no secret (erased)');
      const ts = new Date();
      const signature = keys.map((k) => k.sign(c.event_id, ts, body)).join(' ');
      const res = await deps.fetch(c.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': c.event_id,
          'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        timeoutMs,
        maxRedirects: 0,
        maxBytes: 4096,
      });
      code = res.status;
      if (res.status < 200 || res.status >= 300) error = `answered ${res.status}`;
    } catch (err) {
      error =
        err instanceof SafeFetchError
          ? err.code === 'TOO_MANY_REDIRECTS'
            ? 'a redirect (not followed)'
            : `${err.code}: ${err.message}`
          : (err as Error).message;
      if (err instanceof SafeFetchError && err.code === 'TOO_MANY_REDIRECTS') code = null;
    }
    await finish(c, code, error);
  }

  interface Outcome {
    c: Claimed;
    status: DeliveryStatus;
    code: number | null;
    error: string | null;
    wait: number;
    done: () => void;
    fail: (err: unknown) => void;
  }
  let outcomes: Outcome[] = [];
  let flushing: Promise<void> | null = null;

  /** Records the outcomes waiting, in one statement; each fenced by its attempt (a lease taken over records nothing). */
  async function flush(): Promise<void> {
    while (outcomes.length > 0) {
      const batch = outcomes;
      outcomes = [];
      try {
        await deps.db.raw(
          `update webhook_deliveries d
              set status = o.status, last_status_code = o.code, last_error = o.error, lease_until = null, lease_owner = null,
                  delivered_at = case when o.status = 'succeeded' then now() else d.delivered_at end,
                  next_attempt_at = case when o.status = 'pending' then now() + make_interval(secs => o.wait) else null end
             from unnest(?::uuid[], ?::int[], ?::text[], ?::int[], ?::text[], ?::int[]) as o(id, attempt, status, code, error, wait)
            where d.id = o.id and d.attempts = o.attempt and d.lease_owner = ?`,
          [
            batch.map((o) => o.c.id),
            batch.map((o) => o.c.attempts),
            batch.map((o) => o.status),
            batch.map((o) => o.code),
            batch.map((o) => o.error),
            batch.map((o) => o.wait),
            owner,
          ] as unknown as readonly Knex.RawBinding[],
        );
        for (const o of batch) o.done();
      } catch (err) {
        for (const o of batch) o.fail(err);
      }
    }
  }

  function scheduleFlush(): void {
    if (flushing) return;
    flushing = flush().finally(() => {
      flushing = null;
      if (outcomes.length > 0) scheduleFlush();
    });
  }

  async function finish(c: Claimed, code: number | null, error: string | null): Promise<void> {
    const gone = code === 410;
    const retries = deps.retryScheduleS;
    const status: DeliveryStatus = error === null ? 'succeeded' : gone ? 'failed' : c.attempts > retries.length ? 'dead' : 'pending';
    const wait = status === 'pending' ? retries[c.attempts - 1] : 0;
    await new Promise<void>((done, fail) => {
      outcomes.push({ c, status, code, error, wait, done, fail });
      scheduleFlush();
    });
    if (gone) {
      const ctx = { store: deps.store, organizationId: c.organization_id, actor: SYSTEM_ACTOR };
      await updateWebhook(ctx, c.webhook_id, { status: 'disabled', reason: 'the endpoint answered 410 Gone' }).catch((err) =>
        log.warn({ err, webhook_id: c.webhook_id }, 'could not disable a webhook that answered 410'),
      );
    }
    if (error !== null) log.debug({ delivery_id: c.id, webhook_id: c.webhook_id, attempt: c.attempts, status, error }, 'webhook attempt failed');
  }

  /**
   * Up to `limit` due deliveries, at most `perEndpoint` of one endpoint and none of an endpoint already at its share
   * here: one slow receiver cannot hold every slot. Each endpoint's due rows are read from the index of its own.
   */
  async function claim(limit: number): Promise<Claimed[]> {
    const saturated = saturatedEndpoints();
    return prepared<Claimed>(
      deps.db,
      'aivis_webhooks_claim',
      `with due as (
         select c.id from rm_webhooks w
         cross join lateral (
           select d.id, d.next_attempt_at from webhook_deliveries d
            where d.webhook_id = w.id and d.status = 'pending' and d.next_attempt_at <= now()
              and (d.lease_until is null or d.lease_until < now())
            order by d.next_attempt_at limit $1) c
          where w.status = 'enabled' and not (w.id = any($2::uuid[]))
          order by c.next_attempt_at limit $3),
       locked as (select d.id from webhook_deliveries d join due on due.id = d.id
                   where d.status = 'pending' and (d.lease_until is null or d.lease_until < now()) for update of d skip locked)
       update webhook_deliveries d
          set attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $4), lease_owner = $5
         from locked, rm_webhooks w
        where d.id = locked.id and w.id = d.webhook_id
        returning d.id, d.webhook_id, d.organization_id, d.event_id, d.event_type, d.payload, d.attempts, w.url, w.format, w.secret_changed_at`,
      [perEndpoint, saturated, limit, leaseS, owner],
    );
  }

  function start(c: Claimed): void {
    total++;
    inFlight.set(c.webhook_id, (inFlight.get(c.webhook_id) ?? 0) + 1);
    attempt(c)
      .catch((err) => log.error({ err, delivery_id: c.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        total--;
        const n = (inFlight.get(c.webhook_id) ?? 1) - 1;
        if (n <= 0) inFlight.delete(c.webhook_id);
        else inFlight.set(c.webhook_id, n);
        poke();
      });
  }

  const saturatedEndpoints = () => [...inFlight].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
  // one fan-out at a time takes first attempts (the in-flight shares it reads stay true); the others only write rows
  let leasing = false;
  async function fanOutHere(events: { msg: BusMessage; out: Outgoing }[]): Promise<void> {
    const room = leasing ? 0 : Math.max(0, concurrency - total);
    if (room > 0) leasing = true;
    total += room;
    let results: { added: number; leased: Claimed[] }[];
    try {
      results = await fanOutMany(deps.db, events, { owner, seconds: leaseS, room, saturated: room > 0 ? saturatedEndpoints() : [] });
    } finally {
      total -= room;
      if (room > 0) leasing = false;
    }
    for (const { added, leased } of results) {
      for (const c of leased) start(c);
      if (added > leased.length) poke();
    }
  }

  const loop = (async () => {
    while (running) {
      let got = 0;
      try {
        poked = false;
        const room = concurrency - total;
        if (room > 0) {
          const rows = await claim(room);
          got = rows.length;
          for (const c of rows) start(c);
        }
      } catch (err) {
        if (running) log.warn({ err }, 'webhook dispatcher could not claim deliveries');
      }
      if (!running) break;
      if (got > 0 && total < concurrency) continue;
      if (poked) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deps.pollMs ?? 500);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = null;
    }
  })();

  const fanOut = await deps.follow(
    follower({
      name: WEBHOOK_FANOUT,
      handles: webhookEventTypes(deps.feed),
      async follow(events) {
        const list: { msg: BusMessage; out: Outgoing }[] = [];
        for (const e of events) {
          const msg = openedMessage(e);
          const out = outgoing(deps.feed, msg);
          if (out) list.push({ msg, out });
        }
        if (list.length) await fanOutHere(list);
      },
    }),
  );

  return {
    poke,
    async stop() {
      await fanOut.stop();
      running = false;
      wake?.();
      await loop;
      const deadline = Date.now() + timeoutMs + 1000;
      while (total > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

/** The event types the fan-out follows: the feed's, a webhook's test and a fired alert. */
export const webhookEventTypes = (feed: FeedMapping): EventType[] =>
  [...new Set<string>([...Object.keys(feed), 'WebhookTested', 'AlertFired'])].filter(isKnownType);
