// Access logs for the crawler analytics tests: the user agents of the bots they count, and the upload a log shipper makes.
import { request } from 'undici';

export const GPTBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot';
export const CLAUDEBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
export const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** a person's browser: no crawler */
export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36';

/**
 * Uploads an access log of the website with `key`, streamed (`format`: combined unless given, none with ''): the
 * status and the parsed answer.
 */
export async function uploadCrawlerLog(
  s: { url: string },
  key: string,
  websiteId: string,
  body: string | Buffer,
  o: { format?: string; headers?: Record<string, string> } = {},
) {
  const u = new URL('/api/v1/crawler-logs', s.url);
  u.searchParams.set('website_id', websiteId);
  if (o.format !== '') u.searchParams.set('format', o.format ?? 'combined');
  const res = await request(u, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'text/plain', ...o.headers }, body });
  const text = await res.body.text();
  return { status: res.statusCode, body: JSON.parse(text) };
}
