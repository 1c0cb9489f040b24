// `@hark/diarization/segmentation`: the neural pipeline's segmentation stage on its own, for
// analyses that replace the stages after it (bench/der's oracle clustering). Not for the service.
export { decode, reconstruct, SEGMENTATION, windowStarts } from './neural-diarizer';
export { NeuralSession, type NeuralModelPaths } from './onnx-session';
