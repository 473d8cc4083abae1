package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/archc/archc/rt/engine"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg             *prometheus.Registry
	requests        *prometheus.CounterVec // by endpoint and status
	promptTokens    prometheus.Counter
	generatedTokens prometheus.Counter
	ttft            prometheus.Histogram // seconds from submission to the first token
	itl             prometheus.Histogram // seconds between a request's tokens
}

// newMetrics registers the metrics; stats reports the engine's state
// (false before a model is attached).
func newMetrics(stats func() (engine.Stats, bool)) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "archc_requests_total", Help: "API requests by endpoint and HTTP status.",
		}, []string{"endpoint", "status"}),
		promptTokens: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "archc_prompt_tokens_total", Help: "Prompt tokens of finished requests.",
		}),
		generatedTokens: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "archc_generated_tokens_total", Help: "Generated tokens.",
		}),
		ttft: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "archc_time_to_first_token_seconds", Help: "Time from a request's submission to its first token.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		itl: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "archc_inter_token_latency_seconds", Help: "Time between consecutive tokens of a request.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
	}
	gauge := func(name, help string, f func(engine.Stats) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			st, ok := stats()
			if !ok {
				return 0
			}
			return float64(f(st))
		})
	}
	m.reg.MustRegister(m.requests, m.promptTokens, m.generatedTokens, m.ttft, m.itl,
		gauge("archc_queue_depth", "Requests waiting for a KV-cache slot.", func(s engine.Stats) int { return s.Queued }),
		gauge("archc_slots_in_use", "KV-cache slots held by running requests.", func(s engine.Stats) int { return s.Running }),
		gauge("archc_slots", "KV-cache slots of the model.", func(s engine.Stats) int { return s.Slots }),
		gauge("archc_batch_size", "Decode batch size of the last step (0 when idle).", func(s engine.Stats) int { return s.Batch }),
		prometheus.NewGoCollector(),
	)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
