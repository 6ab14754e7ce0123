//! TODO(owner): tools
