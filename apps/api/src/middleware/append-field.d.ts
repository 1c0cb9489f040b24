// append-field 1.0.0 (multer's, kept so form fields parse as they did): `a[b]`, `a[]` and
// `a[0]` names become nested objects and arrays in `store`.
declare module 'append-field' {
  export default function appendField(store: Record<string, unknown>, key: string, value: string): void;
}
