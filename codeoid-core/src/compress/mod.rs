//! TODO(owner): compress
