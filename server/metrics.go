package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/archc/archc/rt/engine"
)

// metrics are the server's Prometheus metrics, in a registry of its own:
// archc_* names, and the gauges and counters routers scrape under vLLM's
// names too (vllm:*, labelled model_name as vLLM labels them), so that
// vllm-router, sglang-router or llm-d can balance replicas by load.
type metrics struct {
	reg             *prometheus.Registry
	requests        *prometheus.CounterVec // by endpoint and status
	promptTokens    []prometheus.Counter   // archc_ and vllm: names
	generatedTokens []prometheus.Counter
	ttft            []prometheus.Histogram // seconds from submission to the first token
	itl             prometheus.Histogram   // seconds between a request's tokens
	finished        *prometheus.CounterVec // vllm:request_success_total by finished_reason
}

func (m *metrics) addPrompt(n int) {
	for _, c := range m.promptTokens {
		c.Add(float64(n))
	}
}

func (m *metrics) addGenerated() {
	for _, c := range m.generatedTokens {
		c.Inc()
	}
}

func (m *metrics) observeTTFT(sec float64) {
	for _, h := range m.ttft {
		h.Observe(sec)
	}
}

// newMetrics registers the metrics of the model called name; stats
// reports the engine's state (false before a model is attached).
func newMetrics(name string, stats func() (engine.Stats, bool)) *metrics {
	vl := prometheus.Labels{"model_name": name}
	ttftBuckets := prometheus.ExponentialBuckets(0.005, 2, 14)
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "archc_requests_total", Help: "API requests by endpoint and HTTP status.",
		}, []string{"endpoint", "status"}),
		promptTokens: []prometheus.Counter{
			prometheus.NewCounter(prometheus.CounterOpts{Name: "archc_prompt_tokens_total", Help: "Prompt tokens of finished requests."}),
			prometheus.NewCounter(prometheus.CounterOpts{Name: "vllm:prompt_tokens_total", Help: "Prompt tokens of finished requests (vLLM's name).", ConstLabels: vl}),
		},
		generatedTokens: []prometheus.Counter{
			prometheus.NewCounter(prometheus.CounterOpts{Name: "archc_generated_tokens_total", Help: "Generated tokens."}),
			prometheus.NewCounter(prometheus.CounterOpts{Name: "vllm:generation_tokens_total", Help: "Generated tokens (vLLM's name).", ConstLabels: vl}),
		},
		ttft: []prometheus.Histogram{
			prometheus.NewHistogram(prometheus.HistogramOpts{
				Name: "archc_time_to_first_token_seconds", Help: "Time from a request's submission to its first token.", Buckets: ttftBuckets,
			}),
			prometheus.NewHistogram(prometheus.HistogramOpts{
				Name: "vllm:time_to_first_token_seconds", Help: "Time from a request's submission to its first token (vLLM's name).", Buckets: ttftBuckets, ConstLabels: vl,
			}),
		},
		itl: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "archc_inter_token_latency_seconds", Help: "Time between consecutive tokens of a request.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vllm:request_success_total", Help: "Finished generations by finish reason (vLLM's name).", ConstLabels: vl,
		}, []string{"finished_reason"}),
	}
	read := func(f func(engine.Stats) float64) func() float64 {
		return func() float64 {
			st, ok := stats()
			if !ok {
				return 0
			}
			return f(st)
		}
	}
	gauge := func(name, help string, labels prometheus.Labels, f func(engine.Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, read(f))
	}
	counter := func(name, help string, labels prometheus.Labels, f func(engine.Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, read(f))
	}
	drafts := func(s engine.Stats) float64 { return float64(s.Spec.Drafts) }
	drafted := func(s engine.Stats) float64 { return float64(s.Spec.Drafted) }
	accepted := func(s engine.Stats) float64 { return float64(s.Spec.Accepted) }
	kvUsage := func(s engine.Stats) float64 {
		if s.KVCapacity == 0 {
			return 0
		}
		return float64(s.KVTokens) / float64(s.KVCapacity)
	}
	waiting := func(s engine.Stats) float64 { return float64(s.Queued) }
	running := func(s engine.Stats) float64 { return float64(s.Running) }
	up := func(s engine.Stats) float64 {
		if s.Restarting || s.WorkerDown != nil {
			return 0
		}
		return 1
	}
	m.reg.MustRegister(m.requests, m.itl, m.finished)
	for _, c := range append(m.promptTokens, m.generatedTokens...) {
		m.reg.MustRegister(c)
	}
	for _, h := range m.ttft {
		m.reg.MustRegister(h)
	}
	m.reg.MustRegister(
		gauge("archc_queue_depth", "Requests waiting for a KV-cache slot.", nil, waiting),
		gauge("archc_slots_in_use", "KV-cache slots held by running requests.", nil, running),
		gauge("archc_slots", "KV-cache slots of the model.", nil, func(s engine.Stats) float64 { return float64(s.Slots) }),
		gauge("archc_batch_size", "Decode batch size of the last step (0 when idle).", nil, func(s engine.Stats) float64 { return float64(s.Batch) }),
		gauge("archc_kv_cache_usage_ratio", "Fraction of the KV-cache positions (slots × slot length) held by running requests, 0 to 1.", nil, kvUsage),
		gauge("archc_worker_up", "1 while the model's worker serves, 0 while it restarts or after a failed restart.", nil, up),
		gauge("archc_worker_restarts", "Worker restarts since the server started.", nil, func(s engine.Stats) float64 { return float64(s.Restarts) }),
		gauge("vllm:num_requests_waiting", "Requests waiting for a KV-cache slot (vLLM's name).", vl, waiting),
		gauge("vllm:num_requests_running", "Requests holding a KV-cache slot (vLLM's name).", vl, running),
		gauge("vllm:kv_cache_usage_perc", "Fraction of the KV cache held by running requests, 0 to 1 (vLLM's name).", vl, kvUsage),
		counter("archc_spec_decode_drafts_total", "Speculative verify steps run with a draft.", nil, drafts),
		counter("archc_spec_decode_draft_tokens_total", "Tokens drafted for speculative decoding.", nil, drafted),
		counter("archc_spec_decode_accepted_tokens_total", "Drafted tokens the model accepted.", nil, accepted),
		counter("vllm:spec_decode_num_drafts_total", "Speculative verify steps run with a draft (vLLM's name).", vl, drafts),
		counter("vllm:spec_decode_num_draft_tokens_total", "Tokens drafted for speculative decoding (vLLM's name).", vl, drafted),
		counter("vllm:spec_decode_num_accepted_tokens_total", "Drafted tokens the model accepted (vLLM's name).", vl, accepted),
		prometheus.NewGoCollector(),
	)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
