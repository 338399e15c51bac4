/** Authentication lives in src/app/auth.ts (REST and MCP share it). */
export { KeyAuthenticator, keyFromHeaders, UNKNOWN_KEY_MAX, UNKNOWN_KEY_TTL_MS } from '../app/auth';
export { isGlobal, type Principal } from '../domain/principal';
export { actorOf } from '../app/context';
