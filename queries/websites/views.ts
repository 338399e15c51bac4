import { z } from 'zod';

/** A website as a key sees it (rm_websites); external_id appears only in answers to partner keys. */
export const WebsiteView = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  normalized_url: z.string(),
  status: z.enum(['active', 'paused', 'deleted']),
  external_id: z.string().nullable().optional(),
  created_at: z.string(),
});
export type WebsiteView = z.infer<typeof WebsiteView>;

/** An API key as listed (rm_api_keys): never its secret. */
export const ApiKeyView = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string(),
  website_ids: z.array(z.string()).nullable(),
  partner: z.boolean(),
  revoked: z.boolean(),
  created_at: z.string(),
});
export type ApiKeyView = z.infer<typeof ApiKeyView>;
