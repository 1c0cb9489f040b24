export { corpusDer, fileDer, type DerOptions, type DerResult } from './der';
export { maxWeightAssignment } from './hungarian';
export { formatRttm, parseRttm, readRttm, type Turn } from './rttm';
