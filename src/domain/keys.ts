import { createHash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `aivis_` + 40 random base62 characters (≈238 bits). */
export function generateApiKey(): string {
  let s = 'aivis_';
  for (let i = 0; i < 40; i++) s += BASE62[randomInt(62)];
  return s;
}

export const API_KEY_RE = /^aivis_[0-9A-Za-z]{40}$/;

/** Keys are high-entropy secrets: a plain SHA-256 is the right hash (no salt or stretching needed). */
export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');
