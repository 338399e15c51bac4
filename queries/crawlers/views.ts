import { z } from 'zod';

export const Verification = z.enum(['verified', 'unverified', 'unverifiable']);

/** POST /api/v1/crawler-logs: what one log did. */
export const CrawlerImportView = z.object({
  lines: z.number().int().describe('non-empty lines that are not format headers'),
  ai_hits: z.number().int().describe('new AI-crawler hits added (verified + unverified + unverifiable)'),
  verified: z.number().int(),
  unverified: z.number().int(),
  unverifiable: z.number().int(),
  duplicates: z.number().int().describe('AI-crawler lines already imported for the website, or earlier in this body'),
  rejected: z.number().int().describe('malformed lines'),
});

export const CrawlerActivityRow = z.object({
  bot: z.string(),
  operator: z.string(),
  purpose: z.enum(['conversational', 'training']),
  day: z.string().optional(),
  path: z.string().optional(),
  status: z.number().int().optional(),
  hits: z.number().int(),
  pages: z.number().int(),
  last_seen: z.string(),
});
export const CrawlerActivity = z.object({ data: z.array(CrawlerActivityRow) });

export const CrawledPage = z.object({
  url: z.string(),
  crawls: z.number().int(),
  bots: z.array(z.string()),
  last_crawled: z.string().nullable(),
  cited: z.number().int(),
  last_cited: z.string().nullable(),
});
export const CrawledPages = z.object({
  data: z.array(CrawledPage),
  page_num: z.number().int(),
  page_size: z.number().int(),
  has_more: z.boolean(),
});

export type CrawlerActivity = z.infer<typeof CrawlerActivity>;
export type CrawledPages = z.infer<typeof CrawledPages>;
