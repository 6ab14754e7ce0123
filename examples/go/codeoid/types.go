package codeoid

import (
	"encoding/json"
	"fmt"
)

// Config opens a Memory; every field is optional (docs/ffi.md, codeoid_memory_open).
type Config struct {
	// DBPath is the store file; empty means $CODEOID_DB or the platform data directory.
	DBPath string `json:"db_path,omitempty"`
	// WorkspaceDir is a directory inside the workspace; empty means the current directory.
	WorkspaceDir string `json:"workspace_dir,omitempty"`
	// Tenant is mixed into the workspace id; nil keeps the default ("", or $CODEOID_TENANT with
	// FromEnv). A pointer, so that "" can override the environment.
	Tenant *string `json:"tenant,omitempty"`
	// MemoryEnabled false turns memory off for the model (turns are still recorded).
	MemoryEnabled *bool `json:"memory_enabled,omitempty"`
	// FromEnv starts from the CODEOID_* environment variables instead of the defaults.
	FromEnv bool `json:"from_env,omitempty"`
	// CompressRules is a compression rule file.
	CompressRules string `json:"compress_rules,omitempty"`
	// RunTimeoutSecs kills a command Memory.Run still runs after this many seconds, with
	// everything it started (0: never). RunOutput.TimedOut then says so. nil keeps the default
	// (never, or $CODEOID_RUN_TIMEOUT_SECS with FromEnv); a pointer, so that 0 can override the
	// environment. Memory.RunWithTimeout gives one call its own.
	RunTimeoutSecs *float64 `json:"run_timeout_secs,omitempty"`
	// HashLiveReads false stops hashing the files a live session reads (RecordTurn,
	// RecordMessage) right after they are recorded; nil keeps the default, on. The hashes let
	// RecallFile say whether a file changed since it was read. Store's hash_read_files is
	// another thing: hashing inside the recording write, bulk recording and imports included.
	HashLiveReads *bool `json:"hash_live_reads,omitempty"`
	// Rotation and Index change individual settings (docs/rotation.md, docs/workspace-index.md).
	Rotation map[string]any `json:"rotation,omitempty"`
	Index    map[string]any `json:"index,omitempty"`
	// Store settings: busy_timeout_ms, max_episode_bytes, hash_read_files (hash files read
	// inside the write that records them, off by default), include_thinking, read_only (open
	// an existing store for reading only; every write then fails with ErrIO).
	Store map[string]any `json:"store,omitempty"`
	// Embeddings chooses the model recall uses; nil finds one automatically (CODEOID_MODEL_DIR,
	// the Hugging Face cache, then a download on a background thread).
	Embeddings *Embeddings `json:"embeddings,omitempty"`
}

// Embeddings chooses the embedding model; every field is optional.
type Embeddings struct {
	// Enabled false: no model, recall is lexical (BM25, recency, paths), no worker thread.
	Enabled *bool `json:"enabled,omitempty"`
	// ModelDir is a sentence-transformers checkpoint directory to use.
	ModelDir string `json:"model_dir,omitempty"`
	// Download false: use a model only if one is found locally.
	Download *bool `json:"download,omitempty"`
}

// NoEmbeddings is the Embeddings of lexical-only recall.
func NoEmbeddings() *Embeddings {
	off := false
	return &Embeddings{Enabled: &off}
}

// Workspace is the workspace a Memory is bound to.
type Workspace struct {
	WorkspaceID string  `json:"workspace_id"`
	Name        string  `json:"name"`
	Root        string  `json:"root"`
	DBPath      *string `json:"db_path"`
}

// SessionOptions creates a session; every field is optional.
type SessionOptions struct {
	ID               string `json:"id,omitempty"`
	Name             string `json:"name,omitempty"`
	Provider         string `json:"provider,omitempty"`
	Model            string `json:"model,omitempty"`
	CreatedAt        string `json:"created_at,omitempty"`
	BackingContextID string `json:"backing_context_id,omitempty"`
}

// Lineage says where a forked or subagent session came from.
type Lineage struct {
	ParentSessionID string  `json:"parent_session_id"`
	ParentName      *string `json:"parent_name"`
	AtTurn          *uint64 `json:"at_turn"`
	Kind            string  `json:"kind"`
}

// Session is a stored session.
type Session struct {
	ID               string   `json:"id"`
	WorkspaceID      string   `json:"workspace_id"`
	Name             *string  `json:"name"`
	Provider         *string  `json:"provider"`
	Model            *string  `json:"model"`
	Root             string   `json:"root"`
	CreatedAt        string   `json:"created_at"`
	Lineage          *Lineage `json:"lineage"`
	RotationCount    uint64   `json:"rotation_count"`
	LastRotationAt   *string  `json:"last_rotation_at"`
	BackingContextID *string  `json:"backing_context_id"`
	FinishedAt       *string  `json:"finished_at"`
	FirstIntent      *string  `json:"first_intent"`
	LastActivityAt   string   `json:"last_activity_at"`
	TurnCount        uint64   `json:"turn_count"`
}

// Turn is a canonical, provider-neutral turn (docs/canonical-turns.md).
type Turn struct {
	ID        string `json:"id,omitempty"`
	Role      string `json:"role"`
	Parts     []Part `json:"parts"`
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	Usage     *Usage `json:"usage,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	// Meta is free-form metadata kept verbatim; its values stay JSON text, so numbers beyond
	// float64's 53 bits (9007199254740993) come back exact.
	Meta map[string]json.RawMessage `json:"meta,omitempty"`
}

// MarshalJSON writes a nil Parts as an empty list: "parts": null is not a turn, and a Turn
// literal without Parts means one without content.
func (t Turn) MarshalJSON() ([]byte, error) {
	type plain Turn // the same fields without this method
	if t.Parts == nil {
		t.Parts = []Part{}
	}
	return json.Marshal(plain(t))
}

// Part is one content part of a turn; Type selects which fields apply.
type Part struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ID         string          `json:"id,omitempty"`
	ProviderID string          `json:"provider_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	CallID     string          `json:"call_id,omitempty"`
	Parts      []Part          `json:"parts,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	Message    string          `json:"message,omitempty"`
	MediaType  string          `json:"media_type,omitempty"`
	Source     json.RawMessage `json:"source,omitempty"`
	Signature  json.RawMessage `json:"signature,omitempty"`
	Redacted   bool            `json:"redacted,omitempty"`
}

// MarshalJSON writes only the fields of the part's type, so required fields are present even
// when empty (a text part with empty text).
func (p Part) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": p.Type}
	switch p.Type {
	case "text":
		m["text"] = p.Text
	case "thinking":
		m["text"] = p.Text
		if len(p.Signature) > 0 {
			m["signature"] = p.Signature
		}
		if p.Redacted {
			m["redacted"] = true
		}
	case "tool_call":
		m["id"] = p.ID
		m["name"] = p.Name
		input := p.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		m["input"] = input
		if p.ProviderID != "" {
			m["provider_id"] = p.ProviderID
		}
	case "tool_result":
		m["call_id"] = p.CallID
		parts := p.Parts
		if parts == nil {
			parts = []Part{}
		}
		m["parts"] = parts
		if p.IsError {
			m["is_error"] = true
		}
	case "image":
		m["source"] = p.Source
		if p.MediaType != "" {
			m["media_type"] = p.MediaType
		}
	case "error":
		m["message"] = p.Message
	default:
		type plain Part
		return json.Marshal(plain(p))
	}
	return json.Marshal(m)
}

// TextPart is a text part.
func TextPart(text string) Part { return Part{Type: "text", Text: text} }

// ToolCallPart is a tool call with a canonical id and input encoded as JSON; it fails when input
// cannot be encoded (a channel, a func, a NaN), rather than recording a call with other input.
func ToolCallPart(id, name string, input any) (Part, error) {
	if err := checkValue(input, "input of tool call "+id); err != nil {
		return Part{}, err
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return Part{}, fmt.Errorf("codeoid: cannot encode the input of tool call %q (%s) as JSON: %w", id, name, err)
	}
	return Part{Type: "tool_call", ID: id, Name: name, Input: raw}, nil
}

// ToolResultPart is the text result of tool call callID.
func ToolResultPart(callID, text string, isError bool) Part {
	return Part{Type: "tool_result", CallID: callID, Parts: []Part{TextPart(text)}, IsError: isError}
}

// Usage is the model calls that produced a turn.
type Usage struct {
	Calls []CallUsage `json:"calls"`
}

// MarshalJSON writes a nil Calls as an empty list: "calls": null is not a usage object, and
// &Usage{} means no calls.
func (u Usage) MarshalJSON() ([]byte, error) {
	type plain Usage // the same fields without this method
	if u.Calls == nil {
		u.Calls = []CallUsage{}
	}
	return json.Marshal(plain(u))
}

// CallUsage is one model call's token counts.
type CallUsage struct {
	InputTokens         uint64 `json:"input_tokens,omitempty"`
	OutputTokens        uint64 `json:"output_tokens,omitempty"`
	CacheReadTokens     uint64 `json:"cache_read_tokens,omitempty"`
	CacheCreationTokens uint64 `json:"cache_creation_tokens,omitempty"`
	Primary             *bool  `json:"primary,omitempty"`
	Model               string `json:"model,omitempty"`
	RequestID           string `json:"request_id,omitempty"`
}

// Recorded is what recording one turn did.
type Recorded struct {
	TurnID string `json:"turn_id"`
	// Seq is the turn's position in its session; for a duplicate, the earlier turn's.
	Seq uint64 `json:"seq"`
	// Duplicate is true when the session already had a turn with this ID: nothing was written
	// and no error is returned, so re-recording a log is safe. A turn that must be new needs an
	// ID of its own (or none: the store mints one).
	Duplicate  bool     `json:"duplicate"`
	EpisodeIDs []string `json:"episode_ids"`
}

// TurnOutcome is the result of Memory.RecordTurn.
type TurnOutcome struct {
	Recorded        Recorded  `json:"recorded"`
	Decision        *Decision `json:"decision"`
	Rotation        *Rotation `json:"rotation"`
	RotationRefused *string   `json:"rotation_refused"`
}

// Window is the context window occupancy is measured against.
type Window struct {
	Tokens uint64         `json:"tokens"`
	Source map[string]any `json:"source"`
}

// Decision is the rotation policy's verdict on a turn.
type Decision struct {
	ShouldRotate       bool     `json:"should_rotate"`
	Reason             string   `json:"reason"`
	Message            string   `json:"message"`
	Occupancy          *float64 `json:"occupancy"`
	Tokens             *uint64  `json:"tokens"`
	Window             Window   `json:"window"`
	TurnsSinceRotation uint32   `json:"turns_since_rotation"`
	MinTurns           uint32   `json:"min_turns"`
	AutoRotate         bool     `json:"auto_rotate"`
}

// SeedBlock is the text the first message after a rotation starts with.
type SeedBlock struct {
	Rotation uint32 `json:"rotation"`
	Kind     string `json:"kind"`
	Text     string `json:"text"`
}

// Rotation is a rotation that happened.
type Rotation struct {
	Count            uint64    `json:"count"`
	At               string    `json:"at"`
	EpisodeID        string    `json:"episode_id"`
	BackingContextID string    `json:"backing_context_id"`
	Seed             SeedBlock `json:"seed"`
}

// EpisodeHeader is an episode without its content (what timeline pages list).
type EpisodeHeader struct {
	ID            string  `json:"id"`
	WorkspaceID   string  `json:"workspace_id"`
	SessionID     string  `json:"session_id"`
	TurnSeq       uint64  `json:"turn_seq"`
	Kind          string  `json:"kind"`
	ToolName      *string `json:"tool_name"`
	CallID        *string `json:"call_id"`
	Status        string  `json:"status"`
	Summary       string  `json:"summary"`
	CreatedAt     string  `json:"created_at"`
	TokenEstimate uint64  `json:"token_estimate"`
}

// EpisodePath is a file path an episode's tool touched.
type EpisodePath struct {
	Given       string  `json:"given"`
	Relative    string  `json:"relative"`
	Access      string  `json:"access"`
	ContentHash *string `json:"content_hash"`
}

// BlobRef names a raw blob of an episode.
type BlobRef struct {
	Role   string `json:"role"`
	BlobID string `json:"blob_id"`
	Len    uint64 `json:"len"`
}

// Episode is a whole stored episode, content byte for byte.
type Episode struct {
	EpisodeHeader
	Content string        `json:"content"`
	Paths   []EpisodePath `json:"paths"`
	Blobs   []BlobRef     `json:"blobs"`
}

// TimelineQuery selects a timeline page; zero values mean the defaults (newest 20).
type TimelineQuery struct {
	Offset uint64 `json:"offset,omitempty"`
	Limit  uint64 `json:"limit,omitempty"`
	Before string `json:"before,omitempty"`
}

// TimelinePage is one page of the timeline, newest first.
type TimelinePage struct {
	Episodes []EpisodeHeader `json:"episodes"`
	Next     *TimelineQuery  `json:"next"`
}

// Compressed is compressed command output.
type Compressed struct {
	Text      string  `json:"text"`
	Rule      string  `json:"rule"`
	BytesIn   uint64  `json:"bytes_in"`
	BytesOut  uint64  `json:"bytes_out"`
	KeptRatio float64 `json:"kept_ratio"`
	Hint      *string `json:"hint"`
}

// RunOutput is the result of Memory.Run.
type RunOutput struct {
	Stdout     string      `json:"stdout"`
	Stderr     string      `json:"stderr"`
	ExitCode   int         `json:"exit_code"`
	EpisodeID  *string     `json:"episode_id"`
	Compressed *Compressed `json:"compressed"`
	StoreError *string     `json:"store_error"`
	TimedOut   bool        `json:"timed_out"`
	// Interrupted is true when RunContext's context ended while the command ran: it got
	// SIGINT, what was left was killed a second later, and Stdout is what it printed until then.
	Interrupted bool `json:"interrupted"`
	// LeftRunning is true when a process the command started in the background (`server &`)
	// still held its output when the command ended: it was left running, Stdout ends with a line
	// saying so, and what it printed once the output stayed quiet 0.2 s after the command's exit
	// is not here.
	LeftRunning bool `json:"left_running"`
}

// RecallOptions tunes Memory.Recall; zero values mean the defaults.
type RecallOptions struct {
	// Limit is the number of hits, 1..100 (0: the default, 6).
	Limit int `json:"limit,omitempty"`
	// IncludeCurrentSession also searches the calling session's live context (its episodes since
	// its last rotation).
	IncludeCurrentSession bool `json:"include_current_session,omitempty"`
	// AsOf (RFC 3339) is the time recency is measured from; "" means now.
	AsOf    string        `json:"as_of,omitempty"`
	Filters RecallFilters `json:"filters"`
}

// RecallFilters restrict a recall; zero values filter nothing.
type RecallFilters struct {
	SessionID        string `json:"session_id,omitempty"`
	ExcludeSessionID string `json:"exclude_session_id,omitempty"`
	// ToolName matches case-insensitively.
	ToolName string `json:"tool_name,omitempty"`
	// Since and Until (RFC 3339) bound the episodes' creation time: since <= t < until.
	Since string   `json:"since,omitempty"`
	Until string   `json:"until,omitempty"`
	Paths []string `json:"paths,omitempty"`
}

// Components are the four signals of a hit, each in [0, 1].
type Components struct {
	// Vec is the cosine similarity with the query (0 without a model or before embedding).
	Vec     float64 `json:"vec"`
	BM25    float64 `json:"bm25"`
	Recency float64 `json:"recency"`
	Path    float64 `json:"path"`
}

// Relevance says how relevant a hit is on its own, whatever its rank.
type Relevance struct {
	// Terms is the number of the query's search terms; Held the ones the hit's text holds.
	Terms int      `json:"terms"`
	Held  []string `json:"held"`
	// Share is the held terms' part of the query's term weight (rare words weigh more), in [0, 1].
	Share float64 `json:"share"`
	// Lift is the hit's similarity above the scope's typical one (nil without a vector for the
	// hit or a baseline: no model, or fewer than 8 embedded episodes in scope), LiftNeeded the
	// lift that counts as clearly above (nil without a baseline).
	Lift       *float64 `json:"lift"`
	LiftNeeded *float64 `json:"lift_needed"`
	// Weak is set when the hit has neither a lexical match worth the name nor a clearly higher
	// similarity: the recall tool shows such a hit as a header only.
	Weak bool `json:"weak"`
}

// Hit is one recalled episode.
type Hit struct {
	EpisodeHeader
	Content    string        `json:"content"`
	Paths      []EpisodePath `json:"paths"`
	Score      float64       `json:"score"`
	Components Components    `json:"components"`
	Relevance  Relevance     `json:"relevance"`
}

// DiskState says whether a file still has the content it had when it was read.
type DiskState struct {
	// State is unchanged, changed, deleted or unknown.
	State string `json:"state"`
	// Reason says why the state is unknown.
	Reason *string `json:"reason"`
}

// FileRecall is the most recent read of a file.
type FileRecall struct {
	Episode    Episode        `json:"episode"`
	Path       EpisodePath    `json:"path"`
	Disk       DiskState      `json:"disk"`
	LaterWrite *EpisodeHeader `json:"later_write"`
	// Part is set when the read may not have covered the whole file: what the tool tells the
	// model about it ("this read holds lines 120–169 of 1204 only; read the file for the rest").
	Part *string `json:"part"`
	// PassedOver is the later read of part of the file that this earlier whole read of the same
	// content was chosen over, if any.
	PassedOver *PassedOver `json:"passed_over"`
}

// PassedOver is a read of part of a file that recall_file passed over for a whole read.
type PassedOver struct {
	Episode EpisodeHeader `json:"episode"`
	// Part is what the tool says about the part it may hold.
	Part string `json:"part"`
}

// ToolOutput is what a memory tool call returns to the model; send it as an error tool result
// when IsError is set.
type ToolOutput struct {
	Text    string
	IsError bool
}

// EmbeddingStatus is the embedding worker's progress.
type EmbeddingStatus struct {
	// Phase is downloading, loading, ready, unavailable (recall is lexical; see Warnings) or
	// disabled.
	Phase           string  `json:"phase"`
	ModelID         *string `json:"model_id"`
	IndexedEpisodes uint64  `json:"indexed_episodes"`
	IndexedWindows  uint64  `json:"indexed_windows"`
	IndexBytes      uint64  `json:"index_bytes"`
	FailedEpisodes  uint64  `json:"failed_episodes"`
}
