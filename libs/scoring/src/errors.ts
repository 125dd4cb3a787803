/** The one error class of @farm/scoring: a template or parameter problem found while rendering or drawing, a set-up step that failed. */
import { FarmError } from "@farm/errors";

export type ScoringErrorCode = "unknown_param" | "bad_param" | "setup_failed" | "check_timeout";

export class ScoringError extends FarmError<ScoringErrorCode> {
  constructor(code: ScoringErrorCode, message: string) {
    super(code, message, { retryable: false });
  }
}
