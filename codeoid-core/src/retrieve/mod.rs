//! TODO(owner): retrieve
