/** Authentication lives in src/app/auth.ts (REST and MCP share it). */
export { KeyAuthenticator, keyFromHeaders } from '../app/auth';
export { isGlobal, type Principal } from '../domain/principal';
export { actorOf } from '../app/context';
