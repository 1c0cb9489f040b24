// `@hark/diarization/testing`: the generated-speech fixtures, for the bench and other packages' tests.
export {
  generateScenario,
  scriptWords,
  type GeneratedAudio,
  type TimedTurn,
} from '../../test/fixtures/make-audio';
export { BENCH_SCENARIOS, TEST_SCENARIOS } from '../../test/fixtures/scenarios';
