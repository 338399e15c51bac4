export { flagStale } from '../../app/context';
