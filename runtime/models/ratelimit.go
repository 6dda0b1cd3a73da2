package models

import (
	"errors"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
)

// IsRateLimit reports whether err is a provider's refusal for its rate limit (HTTP 429), after
// the SDK's own retries: a caller may try again later.
func IsRateLimit(err error) bool {
	var ae *anthropic.Error
	if errors.As(err, &ae) && ae.StatusCode == http.StatusTooManyRequests {
		return true
	}
	var oe *openai.Error
	return errors.As(err, &oe) && oe.StatusCode == http.StatusTooManyRequests
}
