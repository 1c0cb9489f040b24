/** Language codes whisper.cpp knows (its `g_lang` table), the set `language` is checked against. */
export const WHISPER_LANGUAGES: ReadonlySet<string> = new Set(
  (
    'en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml ' +
    'cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu ' +
    'am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue'
  ).split(' '),
);

/**
 * Accepts a BCP 47 tag whose primary subtag whisper knows ("en", "EN", "en-US", "pt-BR");
 * returns the whisper code, or null when it is not one.
 */
export function normaliseLanguage(tag: string): string | null {
  if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(tag)) return null;
  const primary = tag.split('-')[0]!.toLowerCase();
  return WHISPER_LANGUAGES.has(primary) ? primary : null;
}

/** `model` field value from a ggml file name: ggml-base.en.bin -> whisper-base.en. */
export function modelNameFromPath(modelPath: string): string {
  const file = modelPath.split('/').pop() ?? modelPath;
  const m = /ggml-(.+?)\.bin$/.exec(file);
  return `whisper-${m?.[1] ?? 'unknown'}`;
}
