export {
  loadDispatcherConfig,
  type DispatcherConfig,
  type DispatcherQueueTuning,
  type WebhookScheduleConfig,
} from './config';
export { startDispatcher, type DispatcherDeps, type RunningDispatcher } from './dispatcher';
export { createDeliverHandler, type DeliverDeps } from './deliver.job';
export {
  DeliveryStore,
  automaticSlot,
  type AttemptResult,
  type AttemptSummary,
  type BeginInput,
} from './delivery-store';
export { deliveryIdFor, loadNotice, type Notice } from './notice';
export { sendNotice } from './send-notice';
export { createLogger } from './logger';
export { DispatcherMetrics, type AttemptOutcome } from './metrics';
