/** The error mapping lives in src/app/problem.ts and src/app/errors.ts (REST and MCP share it). */
export { badRequest, fromDomainError, HttpError, issueMessage, sendError, sendProblem, unauthorized } from '../app/errors';
