import { requestEmail } from '../../commands/email/request-email';
import { load } from '../../commands/handle';
import { Organization, organizationStream } from '../../commands/organizations/organization';
import { roleOf } from '../../commands/team/team';
import type { BusMessage, Consumer } from '../bus/port';
import { isDomainError } from '../domain/errors';
import type { EventType } from '../domain/events';
import { systemContext } from './context';
import { type BusWorkerDeps, startWorker } from './worker';

export const INVITATION_WORKER = 'invitation-workers';
export const INVITATION_WORKER_TYPES: readonly EventType[] = ['InviteCreated'];

export interface InvitationWorkerDeps extends BusWorkerDeps {
  /** PUBLIC_BASE_URL: the acceptance link's origin */
  publicBaseUrl: string;
  now?: () => Date;
}

/**
 * The invitation email of an email invite, requested from the outbox once the invite is recorded (record, then send,
 * then mark): the invite is the record, the outbox's key (`invite-<batch id>`) makes every delivery of every invite of
 * one bulk call the same single email, and the email worker sends it. Nothing to send once the invitee was erased.
 */
export async function requestInvitation(
  deps: InvitationWorkerDeps,
  msg: Pick<BusMessage, 'id' | 'data' | 'metadata'>,
): Promise<'requested' | 'already' | 'nothing'> {
  const batchId = (msg.data as { batch_id?: unknown }).batch_id;
  if (typeof batchId !== 'string') return 'nothing';
  const { state } = await load(deps.store, organizationStream(msg.metadata.organization_id), Organization);
  const batch = [...state.team.invites.values()].filter((i) => i.batch_id === batchId);
  const first = batch[0];
  if (!first?.email || !first.token) return 'nothing';
  const actor = msg.metadata.actor;
  const inviter = actor.kind === 'user' && actor.user_id ? (state.team.users.get(actor.user_id)?.email ?? null) : null;
  const targets = batch
    .filter((i) => i.type !== 'organization')
    .map((i) => (i.type === 'website' ? state.websites.get(i.target_id!)?.name : state.team.groups.get(i.target_id!)?.name))
    .filter((n): n is string => !!n?.trim());
  const r = await requestEmail(systemContext(deps.store, msg, deps.now), {
    template: 'invitation',
    to: first.email,
    key: `invite-${batchId}`,
    params: {
      inviter,
      organization: state.name,
      accept_url: `${deps.publicBaseUrl}/invites/accept?token=${first.token}`,
      expires_at: first.expires_at,
      role: roleOf(state.team, first.role_id)?.name,
      ...(targets.length ? { targets: targets.slice(0, 50) } : {}),
    },
  });
  if (isDomainError(r)) {
    deps.logger.error({ worker: INVITATION_WORKER, batch_id: batchId, reason: r.message }, 'invitation email could not be requested');
    return 'nothing';
  }
  return r.result.requested ? 'requested' : 'already';
}

export function startInvitationWorkers(deps: InvitationWorkerDeps): Promise<Consumer> {
  return startWorker({
    bus: deps.bus,
    name: INVITATION_WORKER,
    types: INVITATION_WORKER_TYPES,
    concurrency: 2,
    logger: deps.logger,
    handle: async (msg) => void (await requestInvitation(deps, msg)),
  });
}
