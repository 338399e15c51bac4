export { type Caller, commandContextOf, dbOf } from '../../app/context';
