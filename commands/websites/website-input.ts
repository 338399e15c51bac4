import { z } from 'zod';
import { tryNormalizeUrl } from '../../src/domain/urls';
import { boundedString, label } from '../../src/domain/schemas';

/** A website or competitor URL: http(s) or a bare domain, normalised to the content join key. */
export const SiteUrl = boundedString(2048).refine((s) => tryNormalizeUrl(s) !== null, 'must be an http(s) URL or a domain');
export const ExternalId = boundedString(255);
export const WebsiteName = label(200);

export const CreateWebsite = z.strictObject({
  name: WebsiteName,
  url: SiteUrl,
  external_id: ExternalId.optional(),
});
export type CreateWebsite = z.infer<typeof CreateWebsite>;
