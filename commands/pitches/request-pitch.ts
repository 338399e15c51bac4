import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Knex } from 'knex';
import { z } from 'zod';
import { type DomainError, forbidden, isDomainError } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { label } from '../../src/domain/schemas';
import { hostOf } from '../../src/domain/urls';
import type { Position } from '../../src/eventstore/port';
import { admitUnderHold, type ConcurrencyLimit } from '../../src/limits/holds';
import { monthOf, reserveAllowance } from '../allowances/allowance';
import type { CommandContext } from '../handle';
import { admitOnce } from '../idempotency/idempotency';
import { SiteUrl } from '../websites/website-input';

/** A host a report can be about: a domain name (a dot in it), not an IP address, not a single label like localhost. */
const isDomainName = (host: string | null) =>
  !!host && host.includes('.') && isIP(host.replace(/^\[|\]$/g, '')) === 0 && !host.endsWith('.localhost');

/** The body of POST /api/v1/pitches (and the MCP tool's, less the key). */
export const CreatePitch = z.strictObject({
  website_url: SiteUrl.refine((s) => isDomainName(hostOf(s)), 'must be a website on a domain name (not an IP address or localhost)').describe(
    "The prospect's website: an http(s) URL or a bare domain (its host is what the report is about)",
  ),
  country: label(100).default('United States').describe('Where the answers are asked from (default United States)'),
  language: label(100).default('English').describe('The language of the prompts and answers (default English)'),
});
export type CreatePitch = z.output<typeof CreatePitch>;

/** The Idempotency-Key: one key per report. */
export const IdempotencyKey = label(255);

export const PITCH_KEY_CONFLICT = 'Idempotency key reused with a different request';
export const PITCH_ALLOWANCE_EXHAUSTED = 'Pitch allowance exhausted';
export const PITCH_NOT_ENABLED = 'Pitch reports are not enabled for this organization';
export const PITCH_ALLOWANCE = 'pitch';
export const PITCH_TOO_MANY_IN_PROGRESS = 'Too many pitch reports in progress: at most 3 at once';
export const PITCH_TOO_MANY_REQUESTS = 'Too many pitch report requests: at most 10 per minute';
/** 3 reports processing at once per organization (spec, Limits); a place frees when a report ends */
export const PITCH_PROCESSING: ConcurrencyLimit = { name: 'pitch-processing', limit: 3, retryAfterSeconds: 10, message: PITCH_TOO_MANY_IN_PROGRESS };
/** 10 creation requests per minute per organization (spec, Limits) */
export const PITCH_REQUESTS = { name: 'pitch-requests', limit: 10, windowSeconds: 60, message: PITCH_TOO_MANY_REQUESTS } as const;

/** What the key's fingerprint covers (CONTRACT.md): the website URL's host, the country and the language. */
export function normalizedPitchInput(input: CreatePitch): { domain: string; country: string; language: string } {
  const domain = hostOf(input.website_url);
  if (!domain) throw new Error('website_url passed validation without a host');
  return { domain, country: input.country.trim(), language: input.language.trim() };
}

export interface PitchAdmission {
  key: string;
  db: Knex;
  /** the organization's pitches per UTC month */
  allowance: number;
  /** the models the report asks */
  models: readonly string[];
  /** what is already known of the site (the embedded demo's prospect, offline): its home page is then not fetched */
  researched?: { company_name: string; company_description: string };
}

export interface PitchAdmitted {
  pitch_id: string;
  /** the key had admitted this report before: nothing was done again */
  replayed: boolean;
  position: Position | null;
}

/** An unguessable report token (192 random bits, URL-safe). */
export const newReportToken = () => randomBytes(24).toString('base64url');

/**
 * Admits a pitch report once per Idempotency-Key: a place among the organization's reports in progress, one pitch of
 * the month's allowance (kept when the report fails), then its stream opened by RequestAdmitted and PitchRequested. A
 * repeat of the key with the same normalized input answers the same report and charges nothing; with other input, 409.
 */
export async function requestPitch(ctx: CommandContext, input: CreatePitch, admission: PitchAdmission): Promise<PitchAdmitted | DomainError> {
  const normalized = normalizedPitchInput(input);
  const at = ctx.now?.() ?? new Date();
  const job = { ...ctx, websiteId: null };
  const r = await admitOnce(job, {
    scope: 'pitch',
    key: admission.key,
    input: normalized,
    conflictMessage: PITCH_KEY_CONFLICT,
    streamOf: (id) => jobStream('pitch', id),
    async admit(pitchId): Promise<(DomainEvent & { id: string })[] | DomainError> {
      const stream = jobStream('pitch', pitchId);
      const period = monthOf(at);
      const reserved = await admitUnderHold(admission.db, PITCH_PROCESSING, ctx.organizationId, pitchId, stream, () =>
        reserveAllowance(job, {
          allowance: PITCH_ALLOWANCE,
          period,
          reservation_id: pitchId,
          subject: stream,
          limit: admission.allowance,
          on_failure: 'consumed',
          exhausted: forbidden(PITCH_ALLOWANCE_EXHAUSTED),
        }),
      );
      if (isDomainError(reserved)) return reserved;
      return [
        {
          id: deterministicId('pitch-requested', pitchId),
          type: 'PitchRequested',
          data: {
            job_id: pitchId,
            website_url: input.website_url,
            company_url: `https://${normalized.domain}`,
            domain: normalized.domain,
            country: normalized.country,
            language: normalized.language,
            models: [...admission.models],
            report_token: newReportToken(),
            allowance: { name: PITCH_ALLOWANCE, period },
          },
        },
        ...(admission.researched
          ? [
              {
                id: deterministicId('pitch-site-known', pitchId),
                type: 'PitchSiteResearched' as const,
                data: { job_id: pitchId, ...admission.researched, final_url: `https://${normalized.domain}/` },
              },
            ]
          : []),
      ];
    },
  });
  return isDomainError(r) ? r : { pitch_id: r.resultId, replayed: r.replayed, position: r.position };
}
